"""grpo-lint vs checkov on the same inputs, measured side by side in one run (machines are noisy: read ratios).

  .venv/bin/python bench/lint_vs_checkov.py [--repeat 3]

1. grpo-lint over every shipped values file (one process, as CI runs it) vs checkov --framework kubernetes over
   the manifests those same files render to (one process), side by side: grpo-lint cold (`--no-cache`) and warm
   (every result answered from its cache, filled once before timing). Prints the wall times and both ratios
   (targets: cold >= 6x, warm >= 20x), and what each caught on the reviewed failures (seeded copies of the
   predecessor's bugs).
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
import time
from pathlib import Path

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


def timed(cmd, env=None) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    return time.perf_counter() - start, proc


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
        cold_t, warm_t, ck_t = [], [], []
        for _ in range(args.repeat):  # interleaved, so all three see the same machine load
            t, proc = timed([*lint_cmd, "--no-cache"], env=cache_env)
            assert proc.returncode == 0, proc.stdout
            cold_t.append(t)
            t, proc = timed(lint_cmd, env=cache_env)
            assert proc.returncode == 0, proc.stdout
            warm_t.append(t)
            t, proc = checkov(manifests)
            ck_t.append(t)
        cold_m, warm_m, ck_m = (statistics.median(x) for x in (cold_t, warm_t, ck_t))
        print(f"shipped values: {len(VALUES)} files; medians of {args.repeat} interleaved runs; "
              f"load average {os.getloadavg()[0]:.2f}")
        print(f"  {'tool':<68} {'wall':>7} {'checkov / tool':>15}")
        rows = [("grpo-lint cold (--no-cache: schema, render, object schemas, rules)", cold_m),
                ("grpo-lint warm (every file answered from the result cache)", warm_m),
                ("checkov --framework kubernetes on the rendered manifests", ck_m)]
        for name, t in rows:
            print(f"  {name:<68} {t:6.2f}s {ck_m / t:14.1f}x")
        print(f"  targets: cold >= 6x ({'met' if ck_m / cold_m >= 6 else 'not met'}), "
              f"warm >= 20x ({'met' if ck_m / warm_m >= 20 else 'not met'})")

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
            t, proc = timed([str(BIN / "grpo-lint"), "--no-cache", *map(str, files)])
            print(f"  {n:>3} files: {t:6.2f} s  ({t / n * 1000:6.0f} ms per file)")
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
