"""The HTTP contract at its edges, seen by the clients the trainers really use, over loopback.

Prevents the reviewed failures: a 413 never reached the client (the connection was reset before the body was read,
so slime and miles saw a connection error and retried); a float label that overflows (`1e400`, `NaN`) read as
inf/NaN and scored `\\boxed{\\infty}` as correct; a flood of idle connections made liveness 503; a chunked body
that never ended was closed without the documented 408.

slime and miles post with aiohttp (`session.post(url, json=payload)`, payload built by the trainer); verl goes
through `clients/verl_remote_reward.py` (urllib); `requests` is what most other callers use. Each is run as is
against the real server; where the check stops: the trainers themselves are not started.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time

import aiohttp
import httpx
import pytest
import requests
import verl_remote_reward
from conftest import base_env
from reward_harness import ServiceProcess

MAX_BODY = 4 * 1024 * 1024
CONNECTION_CAP = 12
READ_TIMEOUT_S = 2
# Over the limit, within what the server drains (another MAX_BODY), and larger than loopback socket buffers, so
# the client is still sending when the server has answered (where a connection closed early resets it).
OVERSIZED = "x" * (MAX_BODY + MAX_BODY // 2)


@pytest.fixture(scope="module")
def edge_service(tmp_path_factory):
    env = base_env(REWARD_MAX_BODY_BYTES=str(MAX_BODY), REWARD_MAX_CONNECTIONS=str(CONNECTION_CAP),
                   REWARD_HEADER_TIMEOUT_S=str(READ_TIMEOUT_S), REWARD_BODY_TIMEOUT_S=str(READ_TIMEOUT_S))
    with ServiceProcess(env, tmp_path_factory.mktemp("edges")) as server:
        yield server


def _oversized_sample() -> dict:
    return {"data_source": "test_math", "response": OVERSIZED, "label": 1}


async def _aiohttp_post(url: str, **kwargs) -> tuple[int, dict]:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as session:
        async with session.post(url, **kwargs) as reply:
            return reply.status, await reply.json()


async def _chunks():
    for start in range(0, len(OVERSIZED), 8192):
        yield OVERSIZED[start:start + 8192].encode()


@pytest.mark.parametrize("body", ["json", "chunked"])
def test_413_reaches_aiohttp(edge_service, body):
    """slime's and miles' client: the 413 and its reason arrive, not a connection error to retry."""
    kwargs = {"json": _oversized_sample()} if body == "json" else {"data": _chunks()}
    status, reply = asyncio.run(_aiohttp_post(edge_service.url + "/score", **kwargs))
    assert (status, reply["status"]) == (413, "too_large")
    assert "REWARD_MAX_BODY_BYTES" in reply["detail"]


@pytest.mark.parametrize("body", ["json", "chunked"])
def test_413_reaches_requests(edge_service, body):
    payload = _oversized_sample()
    if body == "json":
        reply = requests.post(edge_service.url + "/score", json=payload, timeout=30)
    else:
        text = json.dumps(payload).encode()
        reply = requests.post(edge_service.url + "/score", data=(text[i:i + 8192] for i in range(0, len(text), 8192)),
                              timeout=30)
    assert (reply.status_code, reply.json()["status"]) == (413, "too_large")


def test_413_reaches_the_verl_client_without_retries(edge_service, monkeypatch):
    """verl's reward function raises on the 413 at once instead of retrying a connection error."""
    monkeypatch.setenv("GRPO_REWARD_URL", edge_service.url + "/score")
    sleeps = []
    monkeypatch.setattr(verl_remote_reward.time, "sleep", sleeps.append)
    with pytest.raises(verl_remote_reward.RemoteRewardError, match="413"):
        verl_remote_reward.compute_score("test_math", OVERSIZED, "1")
    assert sleeps == []


@pytest.mark.parametrize("label", ["1e400", "-1e400", "NaN", "Infinity", "-Infinity", "1e-400",
                                   "[1e400]", '{"ground_truth": NaN}'])
def test_label_a_float_cannot_hold_is_bad_label(service, label):
    """Python's json reads 1e400 as inf and accepts NaN/Infinity (its json.dumps writes them for float columns);
    such a label is refused with `bad_label`, so a response of infinity (or 0 for 1e-400) is never correct."""
    for response in ("\\boxed{\\infty}", "\\boxed{-\\infty}", "\\boxed{0}"):
        body = f'{{"data_source": "test_math", "response": {json.dumps(response)}, "label": {label}}}'
        reply = httpx.post(service.url + "/score", content=body.encode(), timeout=30)
        assert (reply.status_code, reply.json()["status"]) == (200, "bad_label"), reply.text
        assert "float" in reply.json()["detail"]


def test_finite_float_labels_still_score(service):
    """The refusal is for what a float cannot hold; ordinary floats (42.0 read as 42) are untouched."""
    for label, response in (("42.0", "\\boxed{42}"), ("-3.0", "\\boxed{-3}"), ("2.5", "\\boxed{\\frac{5}{2}}")):
        body = f'{{"data_source": "test_math", "response": {json.dumps(response)}, "label": {label}}}'
        reply = httpx.post(service.url + "/score", content=body.encode(), timeout=30)
        assert (reply.status_code, reply.json()["status"]) == (200, "ok"), (label, reply.text)


def test_health_is_exempt_from_the_connection_cap(edge_service):
    """A flood of idle connections fills the cap: scoring is refused at once (503), liveness still answers 200."""
    idle = [socket.create_connection(("127.0.0.1", edge_service.port), timeout=5) for _ in range(CONNECTION_CAP)]
    try:
        time.sleep(0.2)
        refused = httpx.post(edge_service.url + "/score", json={"data_source": "test_math", "response": "1",
                                                                "label": 1}, timeout=10)
        assert refused.status_code == 503
        health = [httpx.get(edge_service.url + "/health", timeout=10) for _ in range(3)]
        assert [reply.status_code for reply in health] == [200] * 3
        assert health[0].json()["status"] == "ok"
    finally:
        for sock in idle:
            sock.close()


def _read_until_closed(sock: socket.socket, timeout_s: float) -> bytes:
    sock.settimeout(timeout_s)
    data = b""
    try:
        while chunk := sock.recv(4096):
            data += chunk
    except (ConnectionResetError, TimeoutError):
        pass
    return data


@pytest.mark.parametrize("framing", ["chunked", "content-length"])
def test_body_that_never_ends_gets_408(edge_service, framing):
    """A body that stops arriving (a chunked one that never sends its last chunk, or one shorter than its
    Content-Length) is answered 408 and closed after REWARD_BODY_TIMEOUT_S."""
    header = (b"Transfer-Encoding: chunked\r\n\r\n5\r\n{\"a\":\r\n" if framing == "chunked"
              else b"Content-Length: 100\r\n\r\n{\"a\":")
    with socket.create_connection(("127.0.0.1", edge_service.port), timeout=5) as sock:
        started = time.monotonic()
        sock.sendall(b"POST /score HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + header)
        reply = _read_until_closed(sock, READ_TIMEOUT_S + 10)
        waited = time.monotonic() - started
    assert reply.startswith(b"HTTP/1.1 408"), reply[:200]
    assert READ_TIMEOUT_S - 0.5 < waited < READ_TIMEOUT_S + 8
