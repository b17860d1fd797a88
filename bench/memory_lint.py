"""What the memory model (GRPO920) adds to a cold grpo-lint over the shipped values files, in CPU time.

Each pair runs `grpo-lint values/*.yaml` twice in fresh processes, cache off: once as shipped and once with
GRPO920's check replaced by a no-op (the rest identical), alternating the order. Prints the per-run CPU seconds
(user + system of the child) and the ratio of the medians; the goal is at most 1.05. Process noise is larger
than the model's cost, so the model's own CPU time over the same files (import, resolve, estimate, fix search:
what GRPO920 runs), measured in one fresh process, is printed beside it as a share of one lint run.

  .venv/bin/python bench/memory_lint.py [--pairs 5]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VALUES = sorted(str(p) for p in (ROOT / "values").glob("*.yaml"))
WITHOUT = ("import sys; import grpo_stack.lint.rules.gpu_memory as m; m.check = lambda ctx: iter(()); "
           "from grpo_stack.cli.lint import main; sys.exit(main(sys.argv[1:]))")
WITH = "import sys; from grpo_stack.cli.lint import main; sys.exit(main(sys.argv[1:]))"


def cpu_seconds(code: str) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = {**os.environ, "GRPO_LINT_NO_CACHE": "1"}
    subprocess.run([sys.executable, "-c", code, "--no-cache", *VALUES], cwd=ROOT, env=env, check=False,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


MODEL_ONLY = """
import sys, time
t0 = time.process_time()
from grpo_stack.job import Spec, build
from grpo_stack.render import job_spec, render
from grpo_stack.values import load_values_file, merge_user_values
built = []
for path in sys.argv[1:]:
    spec = job_spec(render(merge_user_values([load_values_file(path)]), release="grpo", namespace="grpo"))
    built.append((Spec(spec), build(spec)))
t1 = time.process_time()
from grpo_stack.memory import estimate, nearest_fixes
from grpo_stack.memory.resolve import run_for
for spec, job in built:
    run = run_for(spec, job)
    report = estimate(run)
    if report.oom:
        nearest_fixes(run)
print(time.process_time() - t1)
"""


def model_seconds() -> float:
    out = subprocess.run([sys.executable, "-c", MODEL_ONLY, *VALUES], cwd=ROOT, capture_output=True, text=True,
                         check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=5)
    args = parser.parse_args()
    with_model, without = [], []
    for i in range(args.pairs):
        order = ((WITH, with_model), (WITHOUT, without)) if i % 2 == 0 else ((WITHOUT, without), (WITH, with_model))
        for code, out in order:
            out.append(cpu_seconds(code))
    a, b = statistics.median(with_model), statistics.median(without)
    print(f"cold grpo-lint over {len(VALUES)} shipped values files, CPU seconds per run (median of {args.pairs})")
    print(f"  with the memory model    {a:7.3f}   {' '.join(f'{x:.3f}' for x in with_model)}")
    print(f"  without (GRPO920 no-op)  {b:7.3f}   {' '.join(f'{x:.3f}' for x in without)}")
    print(f"  ratio                    {a / b:7.3f}   (of the minima: {min(with_model) / min(without):.3f})")
    own = statistics.median(model_seconds() for _ in range(args.pairs))
    print(f"  the model alone          {own:7.3f}   = {100 * own / b:.2f} % of a run without it")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
