"""The scoring endpoints' replies on the wire: status, body and headers for every outcome a client acts on.

POST /score and /score/batch are served by a thin ASGI handler ahead of FastAPI (the hot path); these tests pin the
replies that handler must give exactly as FastAPI's JSONResponse and exception handlers gave them, and check that
every other method and path still reaches FastAPI.
"""

from __future__ import annotations

import json

import httpx
import pytest
from conftest import base_env
from reward_harness import DEFAULT_SOURCE, ServiceProcess


def _json_reply(reply: httpx.Response) -> dict:
    assert reply.headers["content-type"] == "application/json"
    assert int(reply.headers["content-length"]) == len(reply.content)
    # Compact separators and non-ASCII text as UTF-8, as Starlette's JSONResponse renders.
    assert reply.content == json.dumps(reply.json(), ensure_ascii=False, separators=(",", ":")).encode()
    return reply.json()


def test_scored_reply_is_compact_json(service):
    reply = service.post({"response": "\\boxed{42}", "label": 42, "prompt": "é"})
    assert reply.status_code == 200
    body = _json_reply(reply)
    assert (body["reward"], body["status"], body["scorer"]) == (1.0, "ok", "math")
    assert "retry-after" not in reply.headers and reply.headers.get("connection") != "close"


def test_batch_reply_keeps_order(service):
    samples = [{"response": "\\boxed{1}", "label": 1}, {"response": "\\boxed{2}", "label": 3}]
    reply = service.post({"samples": samples}, path="/score/batch")
    assert reply.status_code == 200
    assert [item["status"] for item in _json_reply(reply)["results"]] == ["ok", "wrong"]


@pytest.mark.parametrize(("path", "body", "detail"), [
    ("/score", b"{not json", "not valid JSON"),
    ("/score", b"[1, 2]", "must be a JSON object, got list"),
    ("/score/batch", b'{"samples": 3}', '{"samples": [...]}'),
    ("/score/batch", b'{"samples": [1]}', "each sample must be a JSON object, got int"),
])
def test_bad_body_is_a_400_with_a_reason(service, path, body, detail):
    """A malformed request is the client's bug: 400 bad_request with the reason, never a 500 or a reward."""
    reply = httpx.post(service.url + path, content=body, timeout=30)
    assert reply.status_code == 400
    data = _json_reply(reply)
    assert data["status"] == "bad_request" and detail in data["detail"]


def test_unknown_source_is_a_400_naming_it(service):
    reply = httpx.post(service.url + "/score", json={"response": "\\boxed{1}", "label": 1, "data_source": "nope"},
                       timeout=30)
    assert reply.status_code == 400
    assert _json_reply(reply)["status"] == "unknown_source"


def test_other_methods_and_paths_reach_fastapi(service):
    """Only POST to the two exact scoring paths takes the thin handler; the rest keeps FastAPI's answers."""
    reply = httpx.get(service.url + "/score", timeout=30)
    assert (reply.status_code, reply.json()) == (405, {"detail": "Method Not Allowed"})
    assert reply.headers["allow"] == "POST"
    reply = httpx.post(service.url + "/scores", json={}, timeout=30)
    assert (reply.status_code, reply.json()) == (404, {"detail": "Not Found"})
    assert httpx.get(service.url + "/health", timeout=30).json()["status"] == "ok"


def test_overload_and_oversized_batch_replies(tmp_path):
    """Overload is 503 with Retry-After: 1, which slime's and verl's clients back off on; a batch over the size
    limit is 413 with the limit named. Guards the headers clients act on, which nothing else checks."""
    env = base_env(REWARD_MAX_IN_FLIGHT="2", REWARD_MAX_BATCH_SIZE="4")
    with ServiceProcess(env, tmp_path) as server:
        sample = {"response": "\\boxed{1}", "label": 1, "data_source": DEFAULT_SOURCE}
        reply = server.post({"samples": [sample] * 3}, path="/score/batch")
        assert reply.status_code == 503 and reply.headers["retry-after"] == "1"
        assert _json_reply(reply)["status"] == "overloaded"
        reply = server.post({"samples": [sample] * 5}, path="/score/batch")
        assert reply.status_code == 413
        assert "REWARD_MAX_BATCH_SIZE" in _json_reply(reply)["detail"]
        assert server.post({"samples": [sample] * 2}, path="/score/batch").status_code == 200
