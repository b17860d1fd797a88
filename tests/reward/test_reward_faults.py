"""Pathological responses, scorer bugs and memory: bounded time, explicit statuses, no hung or bloated worker."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from conftest import TEST_HARD_TIMEOUT_S, TEST_WORKER_MEMORY_MB
from reward_harness import address_space_limit, status_kib

# Generous slack over the hard timeout: the bound is what matters, not the exact figure.
HARD_BOUND_S = TEST_HARD_TIMEOUT_S + 5
NESTED_BRACES = "\\boxed{" + "{" * 10_000 + "1" + "}" * 10_001
HUGE_RESPONSE = "Let me think. " * 71_429 + "So the answer is \\boxed{1}."  # about 1M characters

# (case id, response, statuses accepted); the label is always 1.
PATHOLOGICAL = [
    ("power-tower", "\\boxed{9^{9^{9^{9}}}}", {"screened"}),
    ("huge-power", "\\boxed{2^{10^{10}}}", {"screened"}),
    ("nested-braces-10k", NESTED_BRACES, {"screened"}),
    ("plain-text-tower", "so it is 9^9^9^9", {"timeout", "hard_timeout"}),  # no \boxed: not screened
    # ok on a quiet machine (test_huge_response_is_scored_on_its_tail); parsing its 200k-character tail beside 20
    # other requests can pass math-verify's wall-clock 1 s timeout on a starved one.
    ("one-million-chars", HUGE_RESPONSE, {"ok", "timeout"}),
]


@pytest.mark.parametrize("response, statuses", [case[1:] for case in PATHOLOGICAL], ids=[c[0] for c in PATHOLOGICAL])
def test_pathological_response_is_bounded_and_isolated(service, response, statuses):
    """A pathological response must return within the hard bound with its status, while requests in flight
    beside it still get their correct rewards (the predecessor disabled timeouts, so one such response held a
    worker forever)."""
    assert len(HUGE_RESPONSE) > 1_000_000
    normal = [{"response": f"\\boxed{{{n}}}", "label": n} for n in range(20)]
    with ThreadPoolExecutor(max_workers=8) as executor:
        started = time.monotonic()
        slow = executor.submit(lambda: (service.post({"response": response, "label": 1}), time.monotonic()))
        others = list(executor.map(service.post, normal))
        reply, finished = slow.result()
    assert reply.status_code == 200, reply.text
    assert reply.json()["status"] in statuses, reply.json()
    assert finished - started < HARD_BOUND_S
    assert [(r.status_code, r.json()["status"]) for r in others] == [(200, "ok")] * len(normal)
    service.wait_for_idle_workers(2)


def test_huge_response_is_scored_on_its_tail(service):
    """A 1M-character response is cut to its tail (where the answer is) and says so, instead of failing."""
    data = service.post({"response": HUGE_RESPONSE, "label": 1}).json()
    assert (data["status"], data.get("truncated")) == ("ok", True)


def test_fault_log_line_names_status_and_hash_never_the_response(service):
    """Each fault is one JSON log line with the status and the sample hash; the response text is never logged."""
    marker = "UNIQUEMARKER" * 10
    service.post({"response": marker + "\\boxed{9^{9^{9^{9}}}}", "label": 7})
    time.sleep(0.5)
    lines = [json.loads(line) for line in service.log_text().splitlines() if line.startswith("{")]
    faults = [line for line in lines if line.get("msg") == "scoring fault"]
    assert faults and all(len(line["sample_hash"]) == 16 and line["status"] for line in faults)
    assert marker not in service.log_text()


def test_worker_memory_is_capped(service):
    """Workers run under RLIMIT_AS, so a response that balloons sympy (1.27 GB seen uncapped) cannot take the pod."""
    service.post({"response": "\\boxed{2^{10^{10}}}", "label": 1})
    for pid in service.wait_for_idle_workers(2):
        assert address_space_limit(pid) == TEST_WORKER_MEMORY_MB * 1024 * 1024
        assert status_kib(pid, "VmHWM") < TEST_WORKER_MEMORY_MB * 1024
    assert status_kib(service.proc.pid, "VmRSS") < 512 * 1024


def test_memory_limit_hit_replaces_worker(faulty_service):
    """A worker that exhausts its memory cap is replaced and the sample reports worker_died, not a silent 0.0."""
    reply = faulty_service.post({"response": "\\boxed{1}", "label": 1, "metadata": {"inject_fault": "oom"}})
    assert reply.status_code == 200
    assert reply.json()["status"] == "worker_died"
    assert "memory limit" in reply.json()["detail"]
    faulty_service.wait_for_idle_workers(2)


def test_scorer_exception_is_a_500_not_a_zero_reward(faulty_service):
    """A scorer exception must not become HTTP 200 with reward 0.0 (the predecessor's blanket except)."""
    reply = faulty_service.post({"response": "\\boxed{1}", "label": 1, "metadata": {"inject_fault": "raise"}})
    assert reply.status_code == 500
    assert reply.json()["status"] == "error"
    assert "reward" not in reply.json()
    assert "injected scorer fault" in reply.json()["detail"]


def test_batch_with_a_scorer_fault_fails_whole(faulty_service):
    """One scorer fault in a batch fails the batch with 500 naming the sample, rather than a quiet 0.0 inside it."""
    samples = [{"response": "\\boxed{1}", "label": 1},
               {"response": "x", "label": 1, "metadata": {"inject_fault": "raise"}}]
    reply = faulty_service.post({"samples": samples}, path="/score/batch")
    assert reply.status_code == 500
    assert reply.json()["detail"].startswith("sample 1:")


def test_stuck_worker_is_killed_at_the_hard_timeout(faulty_service):
    """A worker stuck where no signal reaches it is killed at the hard timeout and replaced; the sample says so."""
    started = time.monotonic()
    reply = faulty_service.post({"response": "\\boxed{1}", "label": 1, "metadata": {"inject_fault": "hang"}})
    assert time.monotonic() - started < HARD_BOUND_S
    assert reply.json()["status"] == "hard_timeout"
    faulty_service.wait_for_idle_workers(2)
