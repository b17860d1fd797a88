"""The GPU node's prepared loop (tests/loop/gpu_loop.py), checked where it can be on a CPU: its plan. It runs the
loop tier's values on GPUs through the project's own submit, with nothing of the CPU set. Where the check stops:
the run itself needs GPUs and the verl image; nothing here starts it."""

from __future__ import annotations

import json
import subprocess
import sys

from grpo_stack.job import build

from . import cpu_set, harness


def _plan(tmp_path, *extra: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "tests.loop.gpu_loop", "--plan", "--work", str(tmp_path), *extra],
                         capture_output=True, text=True, cwd=harness.REPO_ROOT, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout)


def test_the_gpu_loop_is_the_loop_tiers_run_on_gpus_through_the_projects_submit(tmp_path):
    from grpo_stack.render import job_spec

    plan = _plan(tmp_path, "--gpus", "2")
    assert plan["spec"] == job_spec(harness.rendered(harness.loop_values(tmp_path / "fsx", 2)))
    assert plan["spec"]["cluster"]["gpusPerNode"] == 2
    assert plan["submit"][1:3] == ["-m", "grpo_stack.job.submit"] and "--follow" in plan["submit"]


def test_nothing_of_the_cpu_set_reaches_the_gpu_loops_command(tmp_path):
    built = build(_plan(tmp_path)["spec"])
    args = {a.key.lstrip("+"): a.value for a in built.args}
    for entry in cpu_set.overrides_and_remaps():
        key = entry.key.lstrip("+")
        if entry.kind == "override":
            assert key not in args, f"{key}: a CPU override in the GPU loop's command"
        else:
            assert args[key] != entry.value, f"{key}: the CPU remap in the GPU loop's command"
    assert not {k for k, _ in built.env} & {e.key for e in cpu_set.CPU_SET if e.kind == "env"}
