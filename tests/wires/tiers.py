"""Where the wire tests find the tier venvs they run the real callers and peers in; never a silent skip in CI."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.tier_venvs import venv_path

REPO = Path(__file__).resolve().parents[2]
LMEVAL_SETUP = "tests/wires/setup_lmeval_venv.sh"


def _python_of(venv: Path, marker: str, what: str, setup_hint: str) -> Path:
    python = venv / "bin" / "python"
    if python.exists() and (venv / marker).exists():
        return python
    reason = f"{what} venv missing at {venv}; {setup_hint}"
    if os.environ.get("CI") == "true":
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


def lmeval_python() -> Path:
    """lm-eval 0.4.10 (images/lm-eval's pins): LMEVAL_VENV, else tests/tier_venvs.py's path."""
    return _python_of(venv_path("lmeval"), ".grpo-lmeval-installed", "lm-eval", "create it with: make lmeval")


def startup_python() -> Path:
    """The start-up tier's venv (vllm, CPU torch): STARTUP_VENV, else tests/tier_venvs.py's path."""
    return _python_of(venv_path("startup"), ".grpo-startup-installed", "start-up", "create it with: make startup")
