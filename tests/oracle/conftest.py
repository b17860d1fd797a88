"""Fixtures for the oracle tier: one worker process per module, a clear failure when the venv is missing."""

from __future__ import annotations

import os

import pytest

from .client import MCORE_WORKER, SETUP_HINT, VERL_WORKER, OracleProcess, oracle_python, oracle_venv

SKIP_ENV = "GRPO_SKIP_ORACLE"


def pytest_configure(config):
    config.addinivalue_line("markers", "oracle: differential tests against verl/megatron-core in .venv-oracle")


def _require_oracle() -> None:
    if os.environ.get(SKIP_ENV) == "1":
        pytest.skip(f"{SKIP_ENV}=1: oracle tier skipped on request")
    if oracle_python() is None:
        # Failing (not skipping) keeps a missing venv from silently turning the tier green.
        pytest.fail(f"oracle venv missing at {oracle_venv()}; {SETUP_HINT}; or set {SKIP_ENV}=1 to skip", pytrace=False)


@pytest.fixture(scope="module")
def verl_oracle():
    _require_oracle()
    with OracleProcess(VERL_WORKER) as proc:
        yield proc


@pytest.fixture(scope="module")
def mcore_oracle():
    _require_oracle()
    with OracleProcess(MCORE_WORKER) as proc:
        yield proc
