"""Where grpo-lint's time goes on the six shipped values files: imports (python -X importtime) and the run's
stages (wall time inside each, measured with perf_counter around the engine's functions; Helm's renders run in
threads beside the main thread, so stages overlap), without the result cache. Machines are noisy: read the
shares, not the absolute numbers.

  .venv/bin/python bench/lint_startup.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VALUES = sorted(str(p) for p in (ROOT / "values").glob("*.yaml"))
# Stage -> the engine's function whose wall time is that stage (lint/engine.py's pipeline).
STAGES = {
    "values: merge over chart defaults (Helm)": "merged_values",
    "values: JSON schema": "schema_violations",
    "helm render (threads, overlapped)": "render",
    "object schemas (kubernetes + KubeRay)": "object_schema_hits",
    "job build (verl/miles command)": "attach_job",
    "rules": "rule_hits",
    "main thread waiting for a render": "_rendered",
}


def imports(module: str) -> tuple[float, list[tuple[str, float]]]:
    """(total seconds, [(top-level package, seconds self time)]) for importing `module` in a fresh process."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"], capture_output=True,
                          text=True, check=True)
    by_pkg: dict[str, float] = defaultdict(float)
    total = 0.0
    for line in proc.stderr.splitlines():  # "import time: <self us> | <cumulative us> | <indent><module>"
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, cumulative_us, name = line.removeprefix("import time:").split("|")
        by_pkg[name.strip().split(".")[0]] += int(self_us) / 1e6
        if not name.startswith("  "):  # a top-level import: its cumulative time counts once
            total += int(cumulative_us) / 1e6
    return total, sorted(by_pkg.items(), key=lambda kv: -kv[1])


def stages() -> tuple[float, float, dict[str, float]]:
    """(wall, process CPU, wall per stage) of one run in this process, linter imported beforehand."""
    import grpo_stack.lint.engine as engine
    from grpo_stack import objectschema
    from grpo_stack.cli.lint import main

    objectschema.forget_validated()  # a cold process starts without validated objects (validators stay built)

    spent: dict[str, float] = defaultdict(float)

    def timed(name, func):
        def wrapper(*args, **kw):
            start = time.perf_counter()
            try:
                return func(*args, **kw)
            finally:
                spent[name] += time.perf_counter() - start
        return wrapper

    saved = {name: getattr(engine, name) for name in [*STAGES.values(), "_finish"]}
    for name, func in saved.items():
        setattr(engine, name, timed(name, func))
    try:
        with open(os.devnull, "w") as null:
            stdout, stderr = sys.stdout, sys.stderr
            sys.stdout = sys.stderr = null
            try:
                cpu, start = time.process_time(), time.perf_counter()
                main(["--no-cache", *VALUES])
                wall, cpu = time.perf_counter() - start, time.process_time() - cpu
            finally:
                sys.stdout, sys.stderr = stdout, stderr
    finally:
        for name, func in saved.items():
            setattr(engine, name, func)
    spent["_rendered"] -= spent["_finish"]  # _rendered = wait for the render + _finish
    return wall, cpu, {stage: spent[name] for stage, name in STAGES.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3, help="runs per measure; medians are printed")
    args = parser.parse_args()
    os.environ["GRPO_LINT_CACHE_DIR"] = tempfile.mkdtemp(prefix="grpo-lint-cache-")
    print(f"load average {os.getloadavg()[0]:.2f}; medians of {args.repeat}")
    for module, what in (("grpo_stack.cli.lint", "the CLI as a warm (cached) run needs it"),
                         ("grpo_stack.lint.release", "the whole linter, as a cold run needs it")):
        runs = [imports(module) for _ in range(args.repeat)]
        total = statistics.median(t for t, _ in runs)
        pkgs: dict[str, list[float]] = defaultdict(list)
        for _, by_pkg in runs:
            for pkg, t in by_pkg:
                pkgs[pkg].append(t)
        print(f"import {module} ({what}): {total:.3f} s; self time by top-level package:")
        for pkg, t in sorted(((p, statistics.median(ts)) for p, ts in pkgs.items()), key=lambda kv: -kv[1])[:10]:
            print(f"  {pkg:<28} {t:.3f} s")
    import grpo_stack.lint.release  # noqa: F401 - imports done before the run is timed

    runs = [stages() for _ in range(args.repeat)]
    wall, cpu = statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)
    print(f"\none run over {len(VALUES)} values files, --no-cache, in this process (imports done): wall {wall:.3f} s, "
          f"CPU {cpu:.3f} s (all threads)")
    for stage in STAGES:
        t = statistics.median(r[2][stage] for r in runs)
        print(f"  {stage:<42} {t:.3f} s  ({t / wall:5.1%} of the wall time)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
