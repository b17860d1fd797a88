"""Where the wire tests find the tier venvs they run the real callers and peers in; never a silent skip in CI."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LMEVAL_SETUP = "tests/wires/setup_lmeval_venv.sh"
# What the setup script hashes into the venv's name (its `fingerprint`), in the same order.
LMEVAL_INPUTS = (LMEVAL_SETUP, "images/lm-eval/requirements.txt", "tests/wires/lmeval-constraints.txt")


def _python_of(venv: Path, marker: str, what: str, setup_hint: str) -> Path:
    python = venv / "bin" / "python"
    if python.exists() and (venv / marker).exists():
        return python
    reason = f"{what} venv missing at {venv}; {setup_hint}"
    if os.environ.get("CI") == "true":
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


def lmeval_python() -> Path:
    """lm-eval 0.4.10 (images/lm-eval's pins): LMEVAL_VENV, else the setup script's default path."""
    fingerprint = hashlib.sha256(b"".join((REPO / p).read_bytes() for p in LMEVAL_INPUTS)).hexdigest()[:16]
    default = Path.home() / ".cache" / "grpo-stack" / "venvs" / f"lmeval-{fingerprint}"
    venv = Path(os.environ.get("LMEVAL_VENV") or default)
    return _python_of(venv, ".grpo-lmeval-installed", "lm-eval", f"create it with: bash {LMEVAL_SETUP}")


def startup_python() -> Path:
    """The start-up tier's venv (vllm, CPU torch): STARTUP_VENV, as tests/startup uses it."""
    venv = Path(os.environ.get("STARTUP_VENV", REPO / ".venv-startup"))
    return _python_of(venv, ".grpo-startup-installed", "start-up", "create it with: make startup")
