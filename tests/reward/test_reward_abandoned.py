"""No work for nobody, no wait behind it: a client that goes away takes its samples' work with it (queued, running,
or waiting for the sandbox), a full queue refuses a fresh request at once with 503 and Retry-After, and every
sample — math or code — is answered within REWARD_DEADLINE_S of its arrival.

Times are read from the service's own clock where it reports one (the `elapsed_ms` of its per-sample fault log
line, counted from the request's arrival), so a slow machine does not make these checks flaky; the only bound is
the stated behaviour (refused within a second; answered by the deadline).
"""

from __future__ import annotations

import json
import threading
import time

import httpx
import pytest
from conftest import base_env
from reward_harness import ServiceProcess, with_source
from sandbox_stub import SandboxStub

SLOW = {"data_source": "test_math", "response": "\\boxed{4}", "label": "4", "metadata": {"inject_fault": "slow"}}
HANG = {"data_source": "test_math", "response": "\\boxed{4}", "label": "4", "metadata": {"inject_fault": "hang"}}
FRESH = {"data_source": "test_math", "response": "\\boxed{7}", "label": "7"}
CODE = {"data_source": "apps", "response": "```python\nprint(input())\n```",
        "label": {"inputs": ["1"], "outputs": ["1"]}}
ROUTES = {"test_math": "math", "apps": "code"}


def _post_in_background(url: str, payload: dict, timeout_s: float, replies: list) -> threading.Thread:
    def post() -> None:
        try:
            replies.append(httpx.post(url + "/score", json=with_source(payload), timeout=timeout_s).status_code)
        except httpx.TimeoutException:
            replies.append("gave up")

    thread = threading.Thread(target=post, daemon=True)
    thread.start()
    return thread


def _wait_for(condition, what: str, server: ServiceProcess, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"{what}; log:\n{server.log_tail()}"
        time.sleep(0.05)


def _in_pool(server: ServiceProcess) -> float:
    return server.metric("reward_queue_depth") + server.metric("reward_running")


def _fault_lines(server: ServiceProcess, status: str) -> list[dict]:
    lines = []
    for line in server.log_text().splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if entry.get("status") == status and "elapsed_ms" in entry:
            lines.append(entry)
    return lines


def test_abandoned_samples_are_not_scored_and_a_fresh_one_is_not_kept_waiting(tmp_path):
    """One worker runs a sample that would hang until the hard timeout, three 1 s samples queue behind it; every
    client gives up. The running sample's worker is stopped (not left to reach its hard timeout), the queued ones
    are never scored, and a fresh sample is answered ok right after."""
    env = base_env(REWARD_WORKERS="1", REWARD_TEST_FAULT_INJECTION="1", REWARD_FAULT_THRESHOLD="1",
                   REWARD_HARD_TIMEOUT_S="30", REWARD_DEADLINE_S="60")
    with ServiceProcess(env, tmp_path) as server:
        replies: list = []
        threads = [_post_in_background(server.url, HANG, 3.0, replies)]
        _wait_for(lambda: server.metric("reward_running") >= 1, "the hanging sample never ran", server)
        threads += [_post_in_background(server.url, SLOW, 3.0, replies) for _ in range(3)]
        for thread in threads:
            thread.join(timeout=60)
        _wait_for(lambda: server.metric("reward_abandoned_total") >= 4, "the service did not see 4 clients leave",
                  server)
        fresh = server.post(FRESH, timeout=60)
        assert (fresh.status_code, fresh.json()["status"]) == (200, "ok")
        assert fresh.json()["elapsed_ms"] < 1000 * 25, "the fresh sample waited as long as a hard timeout"
        assert replies == ["gave up"] * 4
        assert server.metric("reward_pool_restarts_total", 'reason="abandoned"') >= 1
        assert server.metric("reward_pool_restarts_total", 'reason="hard_timeout"') == 0
        # Only the fresh sample was scored to a verdict: none of the three abandoned 1 s samples.
        assert server.metric("reward_scores_total", 'status="ok"') == 1


def test_full_queue_refuses_a_fresh_request_at_once(tmp_path):
    """REWARD_MAX_IN_FLIGHT samples admitted (each would run until the hard timeout, on one worker): the next
    request is 503 `overloaded` with Retry-After, refused within a second of its arrival by the service's own clock.
    When their clients give up, the pool is free again at once: a fresh sample is scored."""
    limit = 6
    env = base_env(REWARD_WORKERS="1", REWARD_TEST_FAULT_INJECTION="1", REWARD_FAULT_THRESHOLD="1",
                   REWARD_MAX_IN_FLIGHT=str(limit), REWARD_HARD_TIMEOUT_S="30", REWARD_DEADLINE_S="60")
    with ServiceProcess(env, tmp_path) as server:
        replies: list = []
        threads = [_post_in_background(server.url, HANG, 15, replies) for _ in range(limit)]
        _wait_for(lambda: _in_pool(server) >= limit, "the queue never filled", server)
        full = server.post(FRESH, timeout=60)
        assert full.status_code == 503 and full.headers["retry-after"] == "1", full.text
        assert full.json()["status"] == "overloaded" and "in flight" in full.json()["detail"]
        refusals = _fault_lines(server, "overloaded")
        assert refusals and refusals[-1]["elapsed_ms"] < 1000, refusals[-1:]
        for thread in threads:
            thread.join(timeout=60)
        _wait_for(lambda: server.metric("reward_abandoned_total") >= limit, "the clients' leaving went unseen",
                  server)
        fresh = server.post(FRESH, timeout=60)
        print(f"full queue: {limit + 2} requests sent, 1 refused, {limit} abandoned by their clients, 0 failed")
        assert replies == ["gave up"] * limit
        assert (fresh.status_code, fresh.json()["status"]) == (200, "ok")


def test_code_samples_have_a_deadline_and_leave_with_their_client(tmp_path):
    """Behind a sandbox that takes 30 s per run: a code sample waiting for the only sandbox slot whose client
    goes away never reaches the sandbox, and one that stays is answered 503 at its deadline (5 s after arrival),
    not when the sandbox answers."""
    with SandboxStub() as sandbox:
        sandbox.mode = "slow"
        env = base_env(REWARD_ROUTES=json.dumps(ROUTES), REWARD_SANDBOX_URL=sandbox.url,
                       REWARD_SANDBOX_CONCURRENCY="1", REWARD_SANDBOX_RETRIES="0",
                       REWARD_SANDBOX_RUN_TIMEOUT_S="10", REWARD_DEADLINE_S="5", REWARD_FAULT_THRESHOLD="1")
        with ServiceProcess(env, tmp_path) as server:
            replies: list = []
            holder = _post_in_background(server.url, CODE, 60, replies)
            _wait_for(lambda: sandbox.calls == 1, "the first code sample never reached the sandbox", server)
            leaver = _post_in_background(server.url, CODE, 1.0, replies)
            leaver.join(timeout=60)
            _wait_for(lambda: server.metric("reward_abandoned_total") >= 1, "the service missed the client leaving",
                      server)
            holder.join(timeout=60)
            assert sorted(replies, key=str) == [503, "gave up"], replies
            late = _fault_lines(server, "overloaded")
            assert late and late[-1]["elapsed_ms"] < 5000 + 1000, late[-1:]
            time.sleep(1.0)
            assert sandbox.calls == 1, "the abandoned code sample still went to the sandbox"
            sandbox.mode = "normal"


@pytest.mark.parametrize("field", ["REWARD_DEADLINE_S"])
def test_deadline_must_leave_room_for_the_hard_timeout(field):
    """A deadline at or below the per-sample kill would refuse every math sample that starts: refused at start."""
    from reward_service.config import ConfigError, Settings

    with pytest.raises(ConfigError, match="must be greater than REWARD_HARD_TIMEOUT_S"):
        Settings.from_env({field: "4", "REWARD_HARD_TIMEOUT_S": "4", "REWARD_ROUTES": json.dumps(ROUTES),
                           "REWARD_SANDBOX_URL": "http://127.0.0.1:1/run_code"})
