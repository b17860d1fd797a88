"""Fixtures for the reward service tests: real `python -m reward_service` servers on loopback."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SERVICE_DIR = REPO / "images" / "reward-service"
for path in (SERVICE_DIR, SERVICE_DIR / "clients", Path(__file__).resolve().parent):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from reward_harness import ServiceProcess  # noqa: E402

# Shorter than production (4 s) so the fault tests finish sooner; still above math-verify's 1 s timeout.
TEST_HARD_TIMEOUT_S = 3
TEST_WORKER_MEMORY_MB = 1024


def base_env(**overrides: str) -> dict[str, str]:
    env = {
        "REWARD_WORKERS": "2",
        "REWARD_HARD_TIMEOUT_S": str(TEST_HARD_TIMEOUT_S),
        "REWARD_WORKER_MEMORY_MB": str(TEST_WORKER_MEMORY_MB),
    }
    env.update(overrides)
    return env


@pytest.fixture(scope="session")
def service(tmp_path_factory):
    """The production configuration (fault injection off), shared by the read-only tests."""
    with ServiceProcess(base_env(), tmp_path_factory.mktemp("service")) as server:
        yield server


@pytest.fixture(scope="session")
def faulty_service(tmp_path_factory):
    """Fault injection on; tests here must not depend on readiness, which injected faults disturb."""
    env = base_env(REWARD_TEST_FAULT_INJECTION="1", REWARD_FAULT_THRESHOLD="1")
    with ServiceProcess(env, tmp_path_factory.mktemp("faulty")) as server:
        yield server


@pytest.fixture
def fresh_faulty_service(tmp_path):
    """A private server with fault injection, for tests that kill workers or trip readiness."""
    env = base_env(REWARD_TEST_FAULT_INJECTION="1", REWARD_FAULT_WINDOW="20", REWARD_FAULT_MIN_SAMPLES="10",
                   REWARD_FAULT_THRESHOLD="0.5")
    with ServiceProcess(env, tmp_path) as server:
        yield server
