"""grpo-lint vs checkov on the same inputs, measured side by side in one run (machines are noisy: read ratios).

  .venv/bin/python bench/lint_vs_checkov.py [--repeat 3]

1. grpo-lint over every shipped values file (one process, as CI runs it) vs checkov --framework kubernetes over
   the manifests those same files render to (one process), side by side: grpo-lint cold (`--no-cache`) and warm
   (every result answered from its cache, filled once before timing). Prints CPU seconds (user + system, what
   the ratios and their targets are of: cold >= 8x, warm >= 30x) and wall seconds, and what each caught on the
   reviewed failures (seeded copies of the predecessor's bugs). checkov is handed the manifests already
   rendered, while grpo-lint renders them itself; with $GRPO_HELM (or --helm) a further row charges checkov the
   `helm template` of each file too, which a checkov user runs first.
2. How grpo-lint's time grows with 1, 10 and 100 values files (copies of the shipped ones).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from cputime import run_timed

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
VALUES = sorted((ROOT / "values").glob("*.yaml"))
CHECKOV_ENV = {**os.environ, "CKV_SKIP_PACKAGE_UPDATE_CHECK": "true", "BC_SKIP_MAPPING": "TRUE"}
# The reviewed failures, seeded into copies of a shipped file: what a user would write.
SEEDED = {
    "cross-namespace reward URL": "global:\n  components: {rewardService: false}\n  job:\n    reward: {kind: external, "
    "url: 'http://reward.default.svc.cluster.local:8000/score'}\n",
    "partial EFA request": "global:\n  cluster: {efaPerNode: 4}\n",
    "eval context below training budget": "global:\n  components: {vllm: true}\nvllm:\n  maxModelLen: 12288\n",
    "token in values": "global:\n  job:\n    trainer: {project: hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345}\n",
    "floating image tag": "fsx-utils:\n  image: {tag: 3.11-slim}\n",
    "worker larger than the node": "raycluster:\n  worker:\n    resources: {cpu: '400', memory: 1600Gi}\n",
}


def timed(cmd, env=None) -> tuple[tuple[float, float], subprocess.CompletedProcess]:
    """((cpu, wall) seconds, the process)."""
    wall, cpu, proc = run_timed(cmd, env)
    return (cpu, wall), proc


def render_all(values: list[Path], out: Path) -> None:
    for v in values:
        subprocess.run([str(BIN / "grpo-render"), str(v), "-o", str(out / v.stem)], check=True, capture_output=True)


def checkov(directory: Path) -> tuple[float, subprocess.CompletedProcess]:
    return timed([str(BIN / "checkov"), "-d", str(directory), "--framework", "kubernetes", "--skip-download",
                  "--quiet", "-o", "json"], env=CHECKOV_ENV)


def seeded_files(tmp: Path) -> dict[str, Path]:
    base = (ROOT / "values" / "qwen3-235b.yaml").read_text()
    out = {}
    for name, overlay in SEEDED.items():
        p = tmp / f"seed-{name.replace(' ', '-')}.yaml"
        p.write_text(base)
        overlay_path = tmp / f"overlay-{name.replace(' ', '-')}.yaml"
        overlay_path.write_text(overlay)
        out[name] = (p, overlay_path)
    return out


def byte_compile_grpo_stack() -> None:
    """Both tools run as installed: pip byte-compiles a wheel (checkov's) at install, an editable install of
    tools/ is not. Where PYTHONDONTWRITEBYTECODE is set (CI images often do) grpo-lint would otherwise compile
    its ~120 modules from source on every run (about 0.1 s). `make setup` compiles them the same way."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "tools" / "grpo_stack")], check=True,
                   capture_output=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--ratios-only", action="store_true", help="only part 1's timing (no seeded failures, "
                        "no scaling)")
    parser.add_argument("--helm", type=Path, default=os.environ.get("GRPO_HELM"),
                        help="Helm for the `helm template` + checkov row")
    args = parser.parse_args()
    byte_compile_grpo_stack()
    tmp = Path(tempfile.mkdtemp(prefix="grpo-bench-"))
    try:
        manifests = tmp / "manifests"
        render_all(VALUES, manifests)
        cache_env = {**os.environ, "GRPO_LINT_CACHE_DIR": str(tmp / "lint-cache")}
        lint_cmd = [str(BIN / "grpo-lint"), *map(str, VALUES)]
        _, proc = timed(lint_cmd, env=cache_env)  # fills the cache the warm runs read
        assert proc.returncode == 0, proc.stdout
        cold_t, warm_t, ck_t, template_t = [], [], [], []
        templates = [[str(args.helm), "template", "grpo", str(ROOT / "charts" / "grpo-stack"), "-f", str(v)]
                     for v in VALUES] if args.helm else []
        for _ in range(args.repeat):  # interleaved, so all of them see the same machine load
            t, proc = timed([*lint_cmd, "--no-cache"], env=cache_env)
            assert proc.returncode == 0, proc.stdout
            cold_t.append(t)
            t, proc = timed(lint_cmd, env=cache_env)
            assert proc.returncode == 0, proc.stdout
            warm_t.append(t)
            t, proc = checkov(manifests)
            ck_t.append(t)
            if templates:
                times = [timed(cmd)[0] for cmd in templates]
                template_t.append((sum(c for c, _ in times) + t[0], sum(w for _, w in times) + t[1]))

        def median(runs, i):
            return statistics.median(r[i] for r in runs)

        print(f"shipped values: {len(VALUES)} files; medians of {args.repeat} interleaved runs; "
              f"load average {os.getloadavg()[0]:.2f}")
        rows = {"grpo-lint cold (--no-cache: schema, render, object schemas, rules)": cold_t,
                "grpo-lint warm (every file answered from the result cache)": warm_t,
                "checkov --framework kubernetes on the rendered manifests": ck_t}
        if template_t:
            rows["helm template per file, then checkov (what a checkov user runs)"] = template_t
        print(f"  {'tool':<68} {'CPU':>7} {'wall':>7}")
        for name, runs in rows.items():
            print(f"  {name:<68} {median(runs, 0):6.2f}s {median(runs, 1):6.2f}s")
        ratios = [("checkov / grpo-lint cold", ck_t, cold_t), ("checkov / grpo-lint warm", ck_t, warm_t)]
        if template_t:
            ratios.append(("helm template + checkov / grpo-lint cold", template_t, cold_t))
        for name, num, den in ratios:
            print(f"  {name:<68} " + " ".join(f"{median(num, i) / median(den, i):6.1f}x" for i in (0, 1)))
        cold_x, warm_x = (median(ck_t, 0) / median(runs, 0) for runs in (cold_t, warm_t))
        print(f"  targets (CPU): cold >= 8x ({'met' if cold_x >= 8 else 'not met'}), "
              f"warm >= 30x ({'met' if warm_x >= 30 else 'not met'})")

        if args.ratios_only:
            return 0
        print("\nreviewed failures seeded into qwen3-235b (caught by: grpo-lint | checkov new failures)")
        _, baseline = checkov(manifests / "qwen3-235b")
        base_failed = _failed(baseline)
        for name, (base, overlay) in seeded_files(tmp).items():
            proc = subprocess.run([str(BIN / "grpo-lint"), "--no-cache", "--format", "json", "--base", str(base),
                                   str(overlay)],
                                  capture_output=True, text=True)
            codes = sorted({f["code"] for f in json.loads(proc.stdout)["findings"]})
            out = tmp / f"r-{overlay.stem}"
            subprocess.run([str(BIN / "grpo-render"), str(base), str(overlay), "-o", str(out)], capture_output=True)
            _, ck = checkov(out)
            new = sorted(_failed(ck) - base_failed)
            print(f"  {name:<38} {', '.join(codes) or '-':<16} | {', '.join(new) or '-'}")

        print("\nscaling (grpo-lint --no-cache, one process):")
        for n in (1, 10, 100):
            files = [VALUES[i % len(VALUES)] for i in range(n)]
            (cpu, wall), proc = timed([str(BIN / "grpo-lint"), "--no-cache", *map(str, files)])
            print(f"  {n:>3} files: {cpu:6.2f} s CPU ({cpu / n * 1000:6.0f} ms per file), {wall:6.2f} s wall")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


def _failed(proc) -> set[str]:
    try:
        data = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return set()
    reports = data if isinstance(data, list) else [data]
    return {f"{c['check_id']}" for r in reports for c in (r.get("results") or {}).get("failed_checks", [])}


if __name__ == "__main__":
    raise SystemExit(main())
