"""`grpo-models stage` onto a volume that fills up mid-copy is a one-line error and exit 2, naming the file, with no
manifest (issue: a traceback). The disk is really full: the stage runs in a mount namespace of its own on an
8 KiB tmpfs, so the kernel itself answers ENOSPC part-way through the model's files."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from .modeldir import make_model

COMMIT = "0" * 40
STAGE = "import sys; from grpo_stack.cli.models import main; sys.exit(main(sys.argv[1:]))"


def _small_volume_available(tmp_path) -> str | None:
    """Why a private tmpfs cannot be mounted here, or None."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        return "mounting a small tmpfs for a real full disk needs root and unshare(1)"
    probe = tmp_path / "probe"
    probe.mkdir()
    proc = subprocess.run(["unshare", "-m", "sh", "-c", f"mount -t tmpfs -o size=8k tmpfs {probe}"],
                          capture_output=True, text=True, check=False)
    return None if proc.returncode == 0 else f"this machine refuses a private tmpfs mount: {proc.stderr.strip()}"


def test_a_volume_that_fills_up_mid_stage_is_one_line_and_exit_2(tmp_path):
    why = _small_volume_available(tmp_path)
    if why:
        pytest.skip(why)
    snapshot = make_model(tmp_path / "snapshot")
    volume = tmp_path / "fsx"
    volume.mkdir()
    dest = volume / "models" / "Qwen3-8B"
    argv = [sys.executable, "-c", STAGE, "stage", "Qwen/Qwen3-8B", "--revision", COMMIT, "--from-dir",
            str(snapshot), "--dest", str(dest), "--no-progress"]
    script = f"mount -t tmpfs -o size=8k tmpfs {volume} && exec \"$@\""
    proc = subprocess.run(["unshare", "-m", "sh", "-c", script, "sh", *argv], capture_output=True, text=True,
                          check=False, timeout=120)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "No space left on device" in lines[0] and str(dest) in lines[0] and "no manifest written" in lines[0]
