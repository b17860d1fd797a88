"""The loop tier's run on a GPU node, without the CPU set: a prepared check for a GPU machine, not part of
`make test`.

    python3 -m tests.loop.gpu_loop [--gpus N] [--work DIR] [--reward-python PY] [--timeout S] [--plan]

Run from this checkout's root inside the verl image (verl, vLLM, Ray, a CUDA torch, flash-attention) on a node
with GPUs. It runs what the loop tier runs: values/qwen3-8b.yaml + tests/loop/overlay.yaml (gpusPerNode set to
`--gpus`, default 1), the tiny model and data of tests/loop/fixtures.py, the reward service on loopback (started
with `--reward-python`, an interpreter with images/reward-service's requirements; default this one), a Ray head
with the node's GPUs, and the project's in-pod submit (`python3 -m grpo_stack.job.submit --follow`). None of
tests/loop/cpu_set.py is applied: verl's default FSDP strategy, flash attention, CUDA graphs and sleep mode, as the
shipped files run. Four steps of 2 prompts x 4 samples take under 5 minutes on one H100 or H200 (model load and
vLLM's graph capture included).

It prints each step's time and verl's actor peak memory (`perf/max_memory_allocated_gb`; the rollout engine is
not in it) and then `grpo-render --job --memory --from-log`'s predicted-against-measured for the same values.
Exit 0 only when the submit exits 0 having logged every step.

`--plan` starts nothing: it prints the job spec and the submit's argv (what tests/loop/test_gpu_loop.py checks on
a CPU: the spec is the loop tier's, on GPUs, and nothing of the CPU set reaches it).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from ..rayhead import RayHead
from . import harness

PEAK = "perf/max_memory_allocated_gb"
STEP_TIME = "timing_s/step"


def plan(work: Path, gpus: int) -> tuple[dict, dict]:
    """(values, job spec) of the run: the loop tier's values on `gpus` GPUs per node, storage under `work`."""
    from grpo_stack.render import job_spec

    values = harness.loop_values(work / "fsx", gpus)
    return values, job_spec(harness.rendered(values))


def submit_argv(spec: Path, address: str) -> list[str]:
    return [sys.executable, "-m", "grpo_stack.job.submit", "--spec", str(spec), "--address", address, "--follow"]


def _gpus_visible() -> int:
    out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, check=False)
    return sum(line.startswith("GPU ") for line in out.stdout.splitlines())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m tests.loop.gpu_loop", description=__doc__.splitlines()[0])
    ap.add_argument("--gpus", type=int, default=1, help="GPUs per node the values ask for (default 1)")
    ap.add_argument("--work", type=Path, help="model, data, checkpoints and logs (default: a new temp dir)")
    ap.add_argument("--reward-python", default=sys.executable, help="interpreter that runs the reward service")
    ap.add_argument("--timeout", type=float, default=900, help="seconds for the submit, model load included")
    ap.add_argument("--plan", action="store_true", help="print the spec and the submit's argv; start nothing")
    args = ap.parse_args(argv)
    work = (args.work or Path(tempfile.mkdtemp(prefix="grpo-gpu-loop."))).resolve()
    work.mkdir(parents=True, exist_ok=True)
    values, spec = plan(work, args.gpus)
    spec_path, values_path = work / "spec.json", work / "values.yaml"
    spec_path.write_text(json.dumps(spec))
    values_path.write_text(yaml.safe_dump(values, sort_keys=False))
    if args.plan:
        print(json.dumps({"spec": spec, "submit": submit_argv(spec_path, "RAY_ADDRESS")}, indent=1))
        return 0
    if _gpus_visible() < args.gpus:
        print(f"gpu-loop: {args.gpus} GPU(s) asked for, nvidia-smi lists {_gpus_visible()}", file=sys.stderr)
        return 2
    return run(work, spec, spec_path, values_path, args)


def run(work: Path, spec: dict, spec_path: Path, values_path: Path, args) -> int:
    from ..reward import reward_harness

    job = spec["job"]
    fixtures = [sys.executable, str(harness.HERE / "fixtures.py"), str(work / "fsx"), job["model"]["path"],
                job["data"]["trainFiles"][0], job["data"]["valFiles"][0], "--shape", json.dumps(job["model"]["shape"]),
                "--train-rows", str(harness.STEPS * job["verl"]["batch"]["trainBatchSize"]), "--val-rows", "2"]
    subprocess.run(fixtures, check=True, env=harness.clean_env())
    config = harness.reward_service_env(harness.rendered(yaml.safe_load(values_path.read_text())))
    with reward_harness.ServiceProcess(config, work, args.reward_python) as reward:
        env = {**harness.clean_env(), "GRPO_REWARD_URL": reward.url + "/score"}
        head = RayHead(Path(shutil.which("ray") or "ray"), gpus=args.gpus, cpus=os.cpu_count() or 8, env=env)
        head.start(head.accepts_a_job)
        try:
            launch = harness.Launch("gpu-loop", submit_argv(spec_path, head.address), work / "submit.log")
            started = time.monotonic()
            submit_env = {**env, "PYTHONPATH": str(harness.REPO_ROOT / "tools")}
            with launch.log_path.open("wb") as log:
                launch.rc = subprocess.run(launch.argv, stdout=log, stderr=subprocess.STDOUT, cwd=work,
                                           timeout=args.timeout, env=submit_env, check=False).returncode
            launch.elapsed = time.monotonic() - started
        finally:
            head.stop()
    return report(launch, values_path)


def report(launch, values_path: Path) -> int:
    steps = launch.steps()
    print(f"gpu-loop: submit exit {launch.rc} after {launch.elapsed:.0f} s; log {launch.log_path}")
    print(f"{'step':>4} {'seconds':>8} {'peak GiB':>9}")
    for step, metrics in sorted(steps.items()):
        print(f"{step:>4} {metrics.get(STEP_TIME, float('nan')):>8.1f} {metrics.get(PEAK, float('nan')):>9.2f}")
    subprocess.run([sys.executable, "-m", "grpo_stack.cli.render", str(values_path), "--job", "--memory",
                    "--from-log", str(launch.log_path)], check=False,
                   env={**os.environ, "PYTHONPATH": str(harness.REPO_ROOT / "tools")})
    missing = sorted(set(range(1, harness.STEPS + 1)) - set(steps))
    if launch.rc != 0 or missing:
        print(f"gpu-loop: FAILED (steps not logged: {missing or 'none'}):\n{launch.tail()}", file=sys.stderr)
        return 1
    print(f"gpu-loop: OK, {harness.STEPS} GRPO steps")
    return 0


if __name__ == "__main__":
    sys.exit(main())
