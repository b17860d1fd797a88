"""Every Dockerfile is hadolint clean: pinned bases, no `cd` chains, no swallowed failures."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from grpo_stack.paths import REPO_ROOT

HADOLINT = Path(sys.executable).parent / "hadolint"
DOCKERFILES = sorted(REPO_ROOT.glob("images/*/Dockerfile"))


def test_there_are_dockerfiles():
    assert {p.parent.name for p in DOCKERFILES} >= {"verl", "miles", "lm-eval", "reward-service"}


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.parent.name)
def test_hadolint_clean(dockerfile):
    proc = subprocess.run([str(HADOLINT), "--no-color", str(dockerfile)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.parent.name)
def test_base_image_is_pinned(dockerfile):
    """No `latest` and no floating base tag (the predecessor's python:3.11-slim drifted between Jobs)."""
    from grpo_stack.lint.rules.image_pinning import floating_reason

    for line in dockerfile.read_text().splitlines():
        if line.startswith("FROM "):
            assert floating_reason(line.split()[1]) is None, line
