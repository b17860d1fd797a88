"""GRPO840's cut continuation against bash itself: the script of its bad fixture fails in bash (the comment ends the
command, the flag below it runs as a command: exit 127), the script of its good fixture runs to the end. The
fixtures' commands are `echo`, so bash runs them as they are."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

FIXTURES = Path(__file__).parent / "rules" / "fixtures" / "GRPO840"

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed here")


def _run(name: str) -> subprocess.CompletedProcess:
    job = yaml.safe_load((FIXTURES / name).read_text())
    script = job["spec"]["template"]["spec"]["containers"][0]["args"][0]
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=30)


def test_bash_runs_the_flag_below_the_comment_as_a_command():
    cut = _run("bad-comment-cuts-continued-command.yaml")
    assert cut.returncode == 127 and "--warmup-steps: command not found" in cut.stderr
    assert cut.stdout.strip() == "sft-runner --epochs 3"  # the command ran without the flags below the comment


def test_bash_runs_the_good_script_whole():
    whole = _run("good-comment-above-continued-command.yaml")
    assert whole.returncode == 0, whole.stderr
    assert "sft-runner --epochs 3 --warmup-steps 200 --lr 2e-5" in whole.stdout and "--finished" in whole.stdout
