"""grpo-lint vs the linters users run beside it in CI, on the same inputs, measured side by side in one run.

  .venv/bin/python bench/lint_vs_go_peers.py [--repeat 3] [--sizes 1,10,100,1000,10000] [--kube-linter PATH]
                                            [--before TOOLS_DIR]

Peers: kubeconform v0.8.0 and kube-score v1.20.0 (`go install` from the Go module proxy on first use, cached under
$GRPO_CACHE/bench-tools/<name>-<version>, default ~/.cache/grpo-stack), kube-linter v0.8.3 (the module proxy does
not serve it: pass a binary built from its v0.8.3 tag with --kube-linter; without one the table says so), checkov
(this venv's) and `helm lint` on the shipped values ($GRPO_HELM, the Helm the suite uses).

Inputs: every object the shipped values files render to, copied release by release into namespaces of their own
(`bench-<k>`), one file per copy, until the files hold N objects, for each N in --sizes (checkov stops at 1,000).
kubeconform validates against the same Kubernetes 1.33 schemas grpo-lint uses (kubernetes-validate's bundle, refs
made file paths) and the KubeRay and Prometheus Operator CRD schemas grpo-lint ships; every tool reads the same
files, all in one call. A tool that refuses the input or crashes is reported as such, never timed.

Figures are CPU seconds (user + system of the tool's process and its children), medians of --repeat runs
interleaved across tools, so load from other processes moves them less than wall time. grpo-lint runs cold
(--no-cache) and warm (its result cache filled once before timing); the peers keep no cache. Printed: the CPU per
tool and size, each peer's CPU over grpo-lint's (cold and warm), and the marginal CPU per manifest between sizes
(start-up excluded), then the shipped values files: `grpo-lint values/*.yaml` against `helm lint -f` per file.
`--before DIR` adds a row "grpo-lint cold (before)": the same cold run with the grpo_stack package under DIR
(another checkout's `tools/`), so a change's effect is measured in the same run as the peers. Both packages are
byte-compiled first, as `make setup` leaves the checkout's.
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

import yaml
from cputime import run_timed

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
VALUES = sorted((ROOT / "values").glob("*.yaml"))
K8S_SCHEMAS = "v1.33.0-local-strict"  # grpo_stack/objectschema.py KUBE_VERSION, strict as grpo-lint validates
GO_PEERS = {  # name -> (module path of its main package, version)
    "kubeconform": ("github.com/yannh/kubeconform/cmd/kubeconform", "v0.8.0"),
    "kube-score": ("github.com/zegl/kube-score/cmd/kube-score", "v1.20.0"),
}
CHECKOV_MAX = 1000
CHECKOV_ENV = {**os.environ, "CKV_SKIP_PACKAGE_UPDATE_CHECK": "true", "BC_SKIP_MAPPING": "TRUE"}
LINT_ENV = dict(os.environ)


def cache_root() -> Path:
    return Path(os.environ.get("GRPO_CACHE") or Path.home() / ".cache" / "grpo-stack") / "bench-tools"


def go_peer(name: str) -> Path:
    module, version = GO_PEERS[name]
    target = cache_root() / f"{name}-{version}"
    if not (target / name).exists():
        target.mkdir(parents=True, exist_ok=True)
        print(f"building {name} {version} (go install, once per machine)", file=sys.stderr)
        subprocess.run(["go", "install", f"{module}@{version}"], check=True, env={**os.environ, "GOBIN": str(target)})
    return target / name


def kubeconform_schemas() -> Path:
    """kubernetes-validate's bundled 1.33 schemas with their `/api/_definitions.json` refs made file paths (as
    kubeconform resolves them), plus the CRD schemas grpo-lint validates RayCluster, RayJob and the monitoring
    kinds with, under kubeconform's `{kind}-{group}-{version}.json` names."""
    import kubernetes_validate

    out = cache_root() / f"kubeconform-schemas-{K8S_SCHEMAS}"
    if (out / "_definitions.json").exists():
        return out
    tmp = Path(tempfile.mkdtemp(dir=cache_root(), prefix=".schemas-"))
    bundle = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema" / K8S_SCHEMAS
    for src in bundle.glob("*.json"):
        text = src.read_text().replace('"/api/_definitions.json#', f'"file://{out}/_definitions.json#')
        (tmp / src.name).write_text(text)
    package = ROOT / "tools" / "grpo_stack"
    schemas: list[tuple[str, str, str, dict]] = []  # kind, group, version, openAPIV3Schema
    for path in (package / "crds").glob("*.v1.7.0.json"):  # KubeRay's, reduced to {kind, group, versions}
        crd = json.loads(path.read_text())
        schemas += [(crd["kind"], crd["group"], v, s) for v, s in crd["versions"].items()]
    for path in (package / "monitoring" / "crds").glob("*.yaml"):  # the Prometheus Operator's, as published
        crd = yaml.safe_load(path.read_text())["spec"]
        schemas += [(crd["names"]["kind"], crd["group"], v["name"], v["schema"]["openAPIV3Schema"])
                    for v in crd["versions"]]
    for kind, group, version, schema in schemas:
        (tmp / f"{kind.lower()}-{group.split('.')[0]}-{version}.json").write_text(json.dumps(schema))
    tmp.rename(out)
    return out


def release_objects(work: Path) -> list[list[dict]]:
    """The objects each shipped values file renders to (grpo-render), one list per release."""
    releases = []
    for values in VALUES:
        out = work / "render" / values.stem
        subprocess.run([str(BIN / "grpo-render"), str(values), "-o", str(out)], check=True, capture_output=True)
        releases.append([doc for f in sorted(out.glob("*.yaml")) for doc in yaml.safe_load_all(f.read_text()) if doc])
    return releases


def input_files(releases: list[list[dict]], size: int, work: Path) -> list[Path]:
    """`size` objects as a user's repository holds them: one file per release copy, copy k in namespace
    bench-<k> (a single 26 MB file of 10,000 objects is refused by grpo-lint and kube-linter alike)."""
    out, left, k = work / f"objects-{size}", size, 0
    out.mkdir()
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    files = []
    while left > 0:
        docs = []
        for obj in releases[k % len(releases)][:left]:
            copy = json.loads(json.dumps(obj))
            copy.setdefault("metadata", {})["namespace"] = f"bench-{k}"
            docs.append(copy)
        path = out / f"release-{k:05d}.yaml"
        path.write_text(yaml.dump_all(docs, Dumper=dumper, sort_keys=False, explicit_start=True))
        files.append(path)
        left -= len(docs)
        k += 1
    return files


def cpu(cmd: list[str], env: dict | None = None) -> float:
    """CPU seconds (user + system) of `cmd` and everything it waited for; a run that did not lint (an exit status
    that means refused input or a crash) is an error, never a time."""
    _, seconds, proc = run_timed(cmd, env)
    if proc.returncode not in (0, 1):  # every tool here: 0 clean, 1 findings
        raise RuntimeError(f"{Path(cmd[0]).name} exited {proc.returncode}: {proc.stderr.strip()[-300:]}")
    return seconds


def commands(files: list[Path], tools: dict[str, Path | None], schemas: Path, cache: Path,
             before: Path | None = None) -> dict[str, tuple]:
    lint, paths = [str(BIN / "grpo-lint"), "--format", "json"], [str(f) for f in files]
    out = {
        "grpo-lint cold": ([*lint, "--no-cache", *paths], LINT_ENV),
        **({"grpo-lint cold (before)": ([*lint, "--no-cache", *paths], {**LINT_ENV, "PYTHONPATH": str(before)})}
           if before else {}),
        "grpo-lint warm": ([*lint, *paths], {**LINT_ENV, "GRPO_LINT_CACHE_DIR": str(cache)}),
        "kubeconform": ([str(tools["kubeconform"]), "-strict", "-summary", "-schema-location",
                         f"{schemas}/{{{{ .ResourceKind }}}}{{{{ .KindSuffix }}}}.json", *paths], None),
        "kube-score": ([str(tools["kube-score"]), "score", *paths], None),
    }
    if tools.get("kube-linter"):
        out["kube-linter"] = ([str(tools["kube-linter"]), "lint", *paths], None)
    return out


def measure(cmds: dict[str, tuple[list, dict]], repeat: int) -> dict[str, float]:
    runs: dict[str, list[float]] = {name: [] for name in cmds}
    for _ in range(repeat):  # interleaved: each round runs every tool once
        for name, (cmd, env) in list(cmds.items()):
            try:
                runs[name].append(cpu(cmd, env))
            except RuntimeError as failed:
                print(f"    {name} did not lint this input: {failed}")
                del cmds[name], runs[name]
    return {name: statistics.median(times) for name, times in runs.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sizes", default="1,10,100,1000,10000")
    ap.add_argument("--kube-linter", type=Path, help="a kube-linter v0.8.3 binary built from its tagged source")
    ap.add_argument("--helm", type=Path, default=os.environ.get("GRPO_HELM"), help="Helm for `helm lint`")
    ap.add_argument("--before", type=Path, help="also lint cold with the grpo_stack package under this directory")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    for package in (ROOT / "tools", args.before):  # both run byte-compiled, as `make setup` leaves the checkout's
        if package:  # (with PYTHONDONTWRITEBYTECODE set, an uncompiled one recompiles ~120 modules on every run)
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(package)], check=True, capture_output=True)
    tools: dict[str, Path | None] = {name: go_peer(name) for name in GO_PEERS}
    tools["kube-linter"] = args.kube_linter
    schemas = kubeconform_schemas()
    print(f"load {os.getloadavg()[0]:.1f}; CPU seconds, median of {args.repeat}")
    if not args.kube_linter:
        print("kube-linter: not at hand (the Go module proxy does not serve golang.stackrox.io/kube-linter; pass "
              "--kube-linter with a binary built from its v0.8.3 tag)")
    work = Path(tempfile.mkdtemp(prefix="lint-peers-"))
    try:
        releases = release_objects(work)
        table: dict[int, dict[str, float]] = {}
        for size in sizes:
            files = input_files(releases, size, work)
            cache = work / f"cache-{size}"
            cmds = commands(files, tools, schemas, cache, args.before)
            if size <= CHECKOV_MAX:
                cmds["checkov"] = ([str(BIN / "checkov"), "-d", str(files[0].parent), "--framework", "kubernetes",
                                    "--skip-download", "--quiet", "-o", "json"], CHECKOV_ENV)
            subprocess.run(cmds["grpo-lint warm"][0], env=cmds["grpo-lint warm"][1], capture_output=True)
            table[size] = measure(cmds, args.repeat)
            print(f"  {size:>6} objects: " + ", ".join(f"{k} {v:.2f}" for k, v in table[size].items()), flush=True)
        report(table, sizes)
        shipped(args, args.repeat)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def report(table: dict[int, dict[str, float]], sizes: list[int]) -> None:
    names = list(dict.fromkeys(n for row in table.values() for n in row))
    print("\nCPU seconds by input size (objects)")
    print("| tool | " + " | ".join(str(s) for s in sizes) + " |")
    print("|---|" + "---|" * len(sizes))
    for name in names:
        print(f"| {name} | " + " | ".join(f"{table[s][name]:.2f}" if name in table[s] else "-" for s in sizes) + " |")
    for base in ("grpo-lint cold", "grpo-lint warm"):
        print(f"\npeer CPU / {base} CPU (above 1: the peer costs more)")
        print("| tool | " + " | ".join(str(s) for s in sizes) + " |")
        print("|---|" + "---|" * len(sizes))
        for name in names:
            if not name.startswith("grpo-lint"):
                print(f"| {name} | " + " | ".join(f"{table[s][name] / table[s][base]:.2f}" if name in table[s]
                                                  else "-" for s in sizes) + " |")
    if "grpo-lint cold (before)" in names:
        print("\ngrpo-lint cold, before / now: " + ", ".join(
            f"{s} {table[s]['grpo-lint cold (before)'] / table[s]['grpo-lint cold']:.2f}x" for s in sizes))
    print("\nmarginal CPU per object between sizes, ms (start-up excluded)")
    pairs = list(zip(sizes, sizes[1:], strict=False))
    print("| tool | " + " | ".join(f"{a}->{b}" for a, b in pairs) + " |")
    print("|---|" + "---|" * len(pairs))
    for name in names:
        cells = [f"{(table[b][name] - table[a][name]) / (b - a) * 1000:.2f}" if name in table[a] and name in
                 table[b] else "-" for a, b in pairs]
        print(f"| {name} | " + " | ".join(cells) + " |")


def shipped(args, repeat: int) -> None:
    """The six shipped values files: grpo-lint in one process (each also with the evaluation overlay) against
    `helm lint` once per file, which checks the chart's schema and templates for those values."""
    cache = Path(tempfile.mkdtemp(prefix="lint-peers-cache-"))
    lint = [str(BIN / "grpo-lint"), *map(str, VALUES)]
    cmds = {"grpo-lint cold": ([lint[0], "--no-cache", *lint[1:]], LINT_ENV),
            "grpo-lint warm": (lint, {**LINT_ENV, "GRPO_LINT_CACHE_DIR": str(cache)})}
    subprocess.run(lint, env=cmds["grpo-lint warm"][1], capture_output=True)
    helm_runs = []
    if args.helm:
        helm_runs = [[str(args.helm), "lint", str(ROOT / "charts" / "grpo-stack"), "-f", str(v)] for v in VALUES]
    times: dict[str, list[float]] = {name: [] for name in [*cmds, *(["helm lint"] if helm_runs else [])]}
    for _ in range(repeat):
        for name, (cmd, env) in cmds.items():
            times[name].append(cpu(cmd, env))
        if helm_runs:
            times["helm lint"].append(sum(cpu(cmd) for cmd in helm_runs))
    medians = {name: statistics.median(t) for name, t in times.items()}
    print(f"\nshipped values ({len(VALUES)} files), CPU seconds: " + ", ".join(f"{k} {v:.2f}" for k, v in
                                                                             medians.items()))
    if "helm lint" in medians:
        print(f"helm lint / grpo-lint cold {medians['helm lint'] / medians['grpo-lint cold']:.2f}, "
              f"/ grpo-lint warm {medians['helm lint'] / medians['grpo-lint warm']:.2f}")
    else:
        print("helm lint: no Helm binary (set GRPO_HELM or pass --helm)")
    shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
