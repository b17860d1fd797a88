"""A worker killed from outside (OOM killer, kill -9) is replaced; the request it held is answered, none is lost."""

from __future__ import annotations

import os
import signal
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
from conftest import base_env
from reward_harness import ServiceProcess

HANG = {"response": "\\boxed{1}", "label": 1, "metadata": {"inject_fault": "hang"}}


def _wait_for(predicate, timeout_s: float = 15) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.1)


def test_killed_worker_is_replaced_and_its_request_answered(tmp_path):
    """Killing a busy worker must answer its request with worker_died, leave the sibling's task running to its own
    end, serve the queued requests, and leave exactly two workers (the predecessor's threads could never be
    reclaimed; a kill-all pool would also fail the sibling)."""
    # A hard timeout long enough that the kill below always lands first, even on a loaded machine.
    with ServiceProcess(base_env(REWARD_TEST_FAULT_INJECTION="1", REWARD_HARD_TIMEOUT_S="10",
                                 REWARD_FAULT_THRESHOLD="1"), tmp_path) as service:
        _kill_one_busy_worker(service)


def _kill_one_busy_worker(service) -> None:
    queued = [{"response": f"\\boxed{{{n}}}", "label": n} for n in range(6)]
    with ThreadPoolExecutor(max_workers=8) as executor:
        hung = [executor.submit(service.post, HANG) for _ in range(2)]
        _wait_for(lambda: service.metric("reward_running") == 2)
        waiting = [executor.submit(service.post, body) for body in queued]
        # Two of them wait inside the pool, next in line behind the hung tasks; the rest wait in the queue.
        _wait_for(lambda: service.metric("reward_running") == 4)
        _wait_for(lambda: service.metric("reward_queue_depth") == len(queued) - 2)
        time.sleep(0.3)  # both hang tasks are now inside their workers
        workers = service.workers()
        assert len(workers) == 2
        os.kill(workers[0], signal.SIGKILL)
        statuses = sorted(future.result().json()["status"] for future in hung)
        replies = [future.result() for future in waiting]
    assert statuses == ["hard_timeout", "worker_died"]
    assert [(r.status_code, r.json()["status"]) for r in replies] == [(200, "ok")] * len(queued)
    assert service.metric("reward_pool_restarts_total", 'reason="worker_died"') == 1
    assert service.metric("reward_pool_restarts_total", 'reason="hard_timeout"') == 1
    new_workers = service.wait_for_idle_workers(2)
    assert workers[0] not in new_workers
    assert service.post({"response": "\\boxed{5}", "label": 5}).json()["status"] == "ok"


def test_requeued_sample_keeps_its_deadline(tmp_path):
    """A sample waiting next in line on a worker that is killed had not started: it goes back to the queue under
    the deadline it was admitted with, and is answered 503 `overloaded` when that passes while no worker can take
    it (it used to lose its deadline and wait for ever)."""
    deadline_s = 3
    broken = tmp_path / "break"
    env = base_env(REWARD_WORKERS="1", REWARD_TEST_FAULT_INJECTION="1", REWARD_FAULT_THRESHOLD="1",
                   REWARD_HARD_TIMEOUT_S="10", REWARD_DEADLINE_S=str(10 + deadline_s),
                   REWARD_TEST_BREAK_START_FILE=str(broken))
    with ServiceProcess(env, tmp_path) as service, ThreadPoolExecutor(max_workers=2) as executor:
        hung = executor.submit(service.post, HANG)
        _wait_for(lambda: service.metric("reward_running") == 1)
        queued = executor.submit(service.post, {"response": "\\boxed{2}", "label": 2})
        _wait_for(lambda: service.metric("reward_running") == 2)  # handed to the busy worker, next in line
        broken.touch()  # no replacement can start
        killed = time.monotonic()
        os.kill(service.workers()[0], signal.SIGKILL)
        assert hung.result(timeout=30).json()["status"] == "worker_died"
        reply = queued.result(timeout=deadline_s + 20)
        waited = time.monotonic() - killed
        assert (reply.status_code, reply.json()["status"]) == (503, "overloaded"), reply.text
        assert waited < deadline_s + 2
        broken.unlink()
        service.wait_for_idle_workers(1, timeout_s=30)
        assert service.post({"response": "\\boxed{5}", "label": 5}).json()["status"] == "ok"


def test_a_node_too_slow_for_the_start_timeout_still_gets_its_workers(tmp_path):
    """Every worker start takes 2.5 s (REWARD_TEST_SLOW_START_FILE) against a 1 s start timeout, as on a node too
    loaded to start one in time: each start abandoned for slowness gives the next twice as long (1 s, 2 s, 4 s), so
    the killed worker's replacement comes up instead of being killed at the same deadline for ever."""
    slow = tmp_path / "slow"
    env = base_env(REWARD_WORKERS="1", REWARD_TEST_FAULT_INJECTION="1", REWARD_START_TIMEOUT_S="1",
                   REWARD_TEST_SLOW_START_FILE=str(slow))
    with ServiceProcess(env, tmp_path) as service:
        (first,) = service.wait_for_idle_workers(1, timeout_s=60)
        slow.write_text("2.5")
        os.kill(first, signal.SIGKILL)
        _wait_for(lambda: service.workers() not in ([], [first]) and service.metric("reward_workers_alive") == 1,
                  timeout_s=40)
        log = service.log_text()
        assert "did not say ready within 1 s" in log and "did not say ready within 2 s" in log, service.log_tail()
        reply = service.post({"response": "\\boxed{4}", "label": 4}, timeout=30)
        assert (reply.status_code, reply.json()["status"]) == (200, "ok")
        assert httpx.get(service.url + "/health", timeout=10).json() == {"status": "ok", "workers_alive": 1}
