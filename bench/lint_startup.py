"""Where grpo-lint's time goes on the six shipped values files: imports (python -X importtime) and the run's
stages (cProfile), without the result cache. Machines are noisy: read the shares, not the absolute numbers.

  .venv/bin/python bench/lint_startup.py
"""

from __future__ import annotations

import cProfile
import os
import pstats
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VALUES = sorted(str(p) for p in (ROOT / "values").glob("*.yaml"))
# Stage -> the function whose cumulative time is that stage (lint/engine.py's pipeline).
STAGES = {
    "imports during the run (deferred)": ("<frozen importlib._bootstrap>", "_find_and_load"),
    "values: read + merge + schema": ("values.py", "load_values_file"),
    "values: pydantic/JSON schema": ("values.py", "schema_violations"),
    "helm render (helm_python)": ("render.py", "render"),
    "object schemas (kubernetes + KubeRay)": ("engine.py", "_object_schema_hits"),
    "job build (verl/miles command)": ("job/__init__.py", "build"),
    "rules": ("engine.py", "_rule_hits"),
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


def stages() -> tuple[float, list[tuple[str, float]]]:
    from grpo_stack.cli.lint import main

    prof = cProfile.Profile()
    with open(os.devnull, "w") as null:
        stdout, stderr = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = null
        try:
            prof.runcall(main, ["--no-cache", *VALUES])
        finally:
            sys.stdout, sys.stderr = stdout, stderr
    stats = pstats.Stats(prof).stats
    total = sum(tt for _, _, tt, _, _ in stats.values())
    out = []
    for stage, (file, func) in STAGES.items():
        cum = sum(ct for (f, _, fn), (_, _, _, ct, _) in stats.items() if f.endswith(file) and fn == func)
        out.append((stage, cum))
    return total, out


def main() -> int:
    os.environ["GRPO_LINT_CACHE_DIR"] = tempfile.mkdtemp(prefix="grpo-lint-cache-")
    for module, what in (("grpo_stack.cli.lint", "the CLI as a warm (cached) run needs it"),
                         ("grpo_stack.lint.release", "the whole linter, as a cold run needs it")):
        total, pkgs = imports(module)
        print(f"import {module} ({what}): {total:.3f} s; self time by top-level package:")
        for pkg, t in pkgs[:10]:
            print(f"  {pkg:<28} {t:.3f} s")
    total, parts = stages()
    print(f"\none run over {len(VALUES)} values files, --no-cache, in this process (imports done): {total:.3f} s")
    for stage, t in parts:
        print(f"  {stage:<40} {t:.3f} s  ({t / total:5.1%})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
