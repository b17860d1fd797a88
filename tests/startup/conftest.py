"""Fixtures for the start-up tier: the start-up venv, one local Ray head per session, built commands."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ..rayhead import RayHead
from ..tier_venvs import venv_path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
SETUP_SCRIPT = HERE / "setup_startup_venv.sh"
MARKER_NAME = ".grpo-startup-installed"
SKIP_ENV = "GRPO_SKIP_STARTUP"
SETUP_HINT = f"create it with: bash {SETUP_SCRIPT.relative_to(REPO_ROOT)}"
RAY_START_TIMEOUT_S = 120


def startup_venv() -> Path:
    return venv_path("startup")


def startup_python() -> Path:
    """The start-up venv's interpreter; fails (never skips) when it is missing, unless GRPO_SKIP_STARTUP=1."""
    if os.environ.get(SKIP_ENV) == "1":
        pytest.skip(f"{SKIP_ENV}=1: start-up tier skipped on request")
    venv = startup_venv()
    python = venv / "bin" / "python"
    if not (python.exists() and (venv / MARKER_NAME).exists()):
        pytest.fail(f"start-up venv missing at {venv}; {SETUP_HINT}; or set {SKIP_ENV}=1 to skip", pytrace=False)
    return python


def pytest_configure(config):
    config.addinivalue_line("markers", "startup: real verl start-up against a local Ray head (.venv-startup)")


def ray_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAY_", "VIRTUAL_ENV"))}
    env.update({"RAY_USAGE_STATS_ENABLED": "0", "TOKENIZERS_PARALLELISM": "false", "PYTHONUNBUFFERED": "1"})
    return env


@pytest.fixture(scope="session")
def ray_head():
    """One head for the session (8 logical GPUs: the per-node shape of every shipped verl values file)."""
    head = RayHead(startup_python().parent / "ray", gpus=8, cpus=64, env=ray_env(), dashboard=False,
                   extra=("--object-store-memory=600000000",))
    head.start(head.gcs_up, timeout=RAY_START_TIMEOUT_S)
    yield head
    head.stop()
