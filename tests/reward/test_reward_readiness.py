"""Readiness follows the share of service faults; liveness never does."""

from __future__ import annotations

import httpx
from reward_service.health import FaultWindow

RAISE = {"response": "\\boxed{1}", "label": 1, "metadata": {"inject_fault": "raise"}}
GOOD = {"response": "\\boxed{1}", "label": 1}


def test_readiness_flips_on_faults_and_recovers(fresh_faulty_service):
    """A run of scorer faults must make /ready fail (the predecessor reported healthy unconditionally), keep /health
    passing (a restart loop mid-rollout would be worse), and /ready must pass again once good scores resume."""
    service = fresh_faulty_service
    assert httpx.get(service.url + "/ready", timeout=10).status_code == 200
    for _ in range(12):
        assert service.post(RAISE).status_code == 500
    unready = httpx.get(service.url + "/ready", timeout=10)
    assert unready.status_code == 503
    assert "service faults" in unready.json()["problems"][0]
    assert httpx.get(service.url + "/health", timeout=10).status_code == 200
    assert service.metric("reward_ready") == 0
    for _ in range(20):
        assert service.post(GOOD).json()["status"] == "ok"
    assert httpx.get(service.url + "/ready", timeout=10).status_code == 200
    assert service.metric("reward_ready") == 1


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_fault_window_needs_enough_samples_before_tripping():
    """A single early fault must not take a fresh pod out of service."""
    window = FaultWindow(size=10, max_age_s=60, threshold=0.5, min_samples=4, clock=FakeClock())
    for _ in range(3):
        window.record(True)
    assert not window.tripped()
    window.record(True)
    assert window.tripped()


def test_fault_window_trips_above_threshold_only():
    window = FaultWindow(size=10, max_age_s=60, threshold=0.5, min_samples=1, clock=FakeClock())
    for fault in (False, True) * 5:
        window.record(fault)
    assert window.fault_share() == 0.5
    assert not window.tripped()
    window.record(True)  # pushes the oldest (ok) entry out: 6 faults in 10
    assert window.tripped()


def test_fault_window_ages_out_so_an_idle_pod_can_recover():
    """An unready pod gets no traffic; its old faults must age out, or it could never become ready again."""
    clock = FakeClock()
    window = FaultWindow(size=100, max_age_s=60, threshold=0.1, min_samples=1, clock=clock)
    for _ in range(5):
        window.record(True)
    assert window.tripped()
    clock.now = 61
    assert window.fault_share() is None
    assert not window.tripped()
