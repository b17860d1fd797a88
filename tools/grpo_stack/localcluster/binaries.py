"""The local cluster's binaries, built from pinned Go modules with `go build` and cached per machine.

Each wrapper module under modules/ (beside this file, shipped in the package) pins one upstream module by version
(go.mod + go.sum):

    kubernetes/  kube-apiserver, kube-controller-manager, kube-scheduler (k8s.io/kubernetes; its staging
                 modules replaced by their published releases)
    etcd/        etcd (go.etcd.io/etcd/server/v3's etcdmain)
    kwok/        kwok (sigs.k8s.io/kwok: fake nodes and the pod lifecycle, no kubelet)
    kuberay/     the KubeRay operator (github.com/ray-project/kuberay/ray-operator)
    prometheus/  promtool (github.com/prometheus/prometheus/cmd/promtool, -tags remove_all_sd) and promql-metrics
                 (its main.go: Prometheus's PromQL parser listing the metrics an expression selects); toolset
                 "promtool", which checks and unit-tests the chart's alert rules and dashboard queries
    kueue/       the Kueue controller manager (sigs.k8s.io/kueue/cmd/kueue), toolset "kueue"

    grpo-cluster build           # build what is missing (idempotent), print the directory
    grpo-cluster build --check   # exit 1 unless a complete, verified build is cached

The binaries come in toolsets (TOOLSETS: the control plane; add-ons each in their own), each cached on its own so
that adding one never rebuilds another. A toolset lands in $GRPO_CLUSTER_TOOLS_CACHE (default
~/.cache/grpo-stack/cluster-tools)/<key>/, the key made of the pinned versions and a hash of its wrapper modules,
the Go version and this recipe, so a second clone and CI on the same machine reuse one build. SHA256SUMS is
written last, after every binary: a directory without it, or whose binaries no longer match it, is a half build
and is built again. Next to the binaries, the build keeps
the operator module's CRDs and kwok's stage files (read from the module cache), which the fixture uses.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

MODULES_DIR = Path(__file__).resolve().parent / "modules"
# Bump when the build below changes in a way the wrapper modules do not show (flags, copied files).
RECIPE = "3"
SUMS = "SHA256SUMS"
STALE_WORK_S = 6 * 3600  # a build directory untouched this long belongs to a build that no longer runs


@dataclass(frozen=True)
class Tool:
    name: str  # binary name
    module_dir: str  # wrapper module under modules/
    package: str  # what `go build` builds, in that module
    upstream: str  # the pinned upstream module (its version goes into the cache key)
    tags: str = ""  # go build -tags


TOOLS = (
    Tool("kube-apiserver", "kubernetes", "k8s.io/kubernetes/cmd/kube-apiserver", "k8s.io/kubernetes"),
    Tool("kube-controller-manager", "kubernetes", "k8s.io/kubernetes/cmd/kube-controller-manager",
         "k8s.io/kubernetes"),
    Tool("kube-scheduler", "kubernetes", "k8s.io/kubernetes/cmd/kube-scheduler", "k8s.io/kubernetes"),
    Tool("etcd", "etcd", ".", "go.etcd.io/etcd/server/v3"),
    Tool("kwok", "kwok", "sigs.k8s.io/kwok/cmd/kwok", "sigs.k8s.io/kwok"),
    Tool("kuberay-operator", "kuberay", "github.com/ray-project/kuberay/ray-operator",
         "github.com/ray-project/kuberay/ray-operator"),
)
# Build outputs copied from the module cache: (module dir, upstream module, path inside it, name in the cache).
DATA = (
    ("kuberay", "github.com/ray-project/kuberay/ray-operator", "config/crd/bases", "kuberay-crds"),
    ("kwok", "sigs.k8s.io/kwok", "kustomize/stage", "kwok-stages"),
)




@dataclass(frozen=True)
class Toolset:
    name: str
    tools: tuple[Tool, ...]
    data: tuple[tuple[str, str, str, str], ...] = ()  # as DATA

    @property
    def module_dirs(self) -> list[str]:
        return sorted({t.module_dir for t in self.tools} | {d[0] for d in self.data})


CONTROL_PLANE = Toolset("control-plane", TOOLS, DATA)
# The chart's alert rules and dashboard queries are checked by Prometheus's own code (grpo_stack/monitoring).
# remove_all_sd leaves the service-discovery plugins (cloud SDKs) out: promtool's rule checks and tests need none.
PROMTOOL = Toolset("promtool", (
    Tool("promtool", "prometheus", "github.com/prometheus/prometheus/cmd/promtool", "github.com/prometheus/prometheus",
         tags="remove_all_sd"),
    Tool("promql-metrics", "prometheus", ".", "github.com/prometheus/prometheus"),
))
# Kueue, started by the control plane when asked (cluster.ControlPlane(kueue=<this toolset's directory>)): its CRDs
# with their conversion-webhook patches, and its webhook configurations (kueue.py points both at the local process).
KUEUE = Toolset("kueue", (Tool("kueue", "kueue", "sigs.k8s.io/kueue/cmd/kueue", "sigs.k8s.io/kueue"),), (
    ("kueue", "sigs.k8s.io/kueue", "config/components/crd", "kueue-crds"),
    ("kueue", "sigs.k8s.io/kueue", "config/components/webhook", "kueue-webhook"),
))
TOOLSETS = {t.name: t for t in (CONTROL_PLANE, KUEUE, PROMTOOL)}


class BuildError(RuntimeError):
    pass


def toolset(name: str) -> Toolset:
    try:
        return TOOLSETS[name]
    except KeyError:
        raise BuildError(f"no toolset {name!r}; known: {', '.join(TOOLSETS)}") from None


def pinned_version(module_dir: str, module: str) -> str:
    """The version the wrapper's go.mod requires of `module` (one source: go.mod itself)."""
    text = (MODULES_DIR / module_dir / "go.mod").read_text()
    match = re.search(rf"^\s*(?:require\s+)?{re.escape(module)}\s+(v\S+)", text, re.M)
    if not match:
        raise BuildError(f"modules/{module_dir}/go.mod requires no {module}")
    return match.group(1)


def versions(name: str = CONTROL_PLANE.name) -> dict[str, str]:
    """Short name -> pinned version of each upstream module of the toolset."""
    seen = {(t.module_dir, t.upstream) for t in toolset(name).tools}
    return {d: pinned_version(d, m) for d, m in sorted(seen)}


def _go_version() -> str:
    try:
        return subprocess.run(["go", "env", "GOVERSION"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError) as exc:
        raise BuildError(f"no usable Go toolchain on PATH ({exc}); the local cluster is built with Go 1.26") from exc


def cache_key(name: str = CONTROL_PLANE.name) -> str:
    digest = hashlib.sha256(f"recipe {RECIPE}\n{_go_version()}\n".encode())
    for path in sorted(p for d in toolset(name).module_dirs for p in (MODULES_DIR / d).glob("*")):
        if path.suffix in (".mod", ".sum", ".go"):
            digest.update(f"{path.relative_to(MODULES_DIR)}\n".encode() + path.read_bytes())
    vers = versions(name)
    if name == CONTROL_PLANE.name:  # the control plane's key predates toolsets: kept, so its cache stays valid
        label = f"k8s-{vers['kubernetes']}_etcd-{vers['etcd']}_kwok-{vers['kwok']}_kuberay-{vers['kuberay']}"
    else:
        label = "_".join(f"{d}-{v}" for d, v in vers.items())
    return f"{label}_{digest.hexdigest()[:12]}"


def cache_root() -> Path:
    default = Path.home() / ".cache" / "grpo-stack" / "cluster-tools"
    return Path(os.environ.get("GRPO_CLUSTER_TOOLS_CACHE") or default)


def tools_dir(name: str = CONTROL_PLANE.name) -> Path:
    return cache_root() / cache_key(name)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verified(directory: Path | None = None, name: str = CONTROL_PLANE.name) -> bool:
    """True when `directory` (default: the toolset's) holds a complete build of toolset `name`: SHA256SUMS
    present and every binary matching it."""
    directory = directory or tools_dir(name)
    sums = directory / SUMS
    if not sums.is_file():
        return False
    listed = dict(reversed(line.split(None, 1)) for line in sums.read_text().splitlines() if line.strip())
    if set(listed) != {t.name for t in toolset(name).tools}:
        return False
    return all((directory / name).is_file() and _sha256(directory / name) == digest
               for name, digest in listed.items())


def _ldflags(tool: Tool, vers: dict[str, str]) -> str:
    flags = ["-s", "-w"]
    if tool.module_dir == "kubernetes":
        # What `hack/lib/version.sh` stamps: without it the API server reports v0.0.0 and Helm's kubeVersion
        # checks (and kubectl's skew warning) see no Kubernetes version at all.
        version = vers["kubernetes"]
        major, minor = version.lstrip("v").split(".")[:2]
        pkg = "k8s.io/component-base/version"
        flags += [f"-X {pkg}.gitVersion={version}", f"-X {pkg}.gitMajor={major}", f"-X {pkg}.gitMinor={minor}",
                  f"-X {pkg}.gitTreeState=clean", f"-X {pkg}.buildDate=1970-01-01T00:00:00Z"]
    return " ".join(flags)


def go_env(scratch: Path) -> dict[str, str]:
    """The environment `go build` runs in: flags, and caches under `scratch` unless the environment names its own."""
    env = dict(os.environ)
    # Two cores shared with other work: two packages at a time; the module graph is what go.sum pins.
    # -modcacherw: the scratch module cache can be deleted after the build (Go makes it read-only otherwise).
    env["GOFLAGS"] = " ".join(filter(None, [env.get("GOFLAGS", ""), "-mod=readonly", "-trimpath", "-p=2",
                                            "-modcacherw"]))
    env.setdefault("CGO_ENABLED", "0")
    # The binaries are what is kept (by version, above); the ~9 GB of module sources and compiled packages a build
    # leaves in Go's default caches would only speed a rebuild of another version. A build uses caches of its own,
    # deleted with it, unless the environment names its own GOCACHE / GOMODCACHE.
    env.setdefault("GOCACHE", str(scratch / "build"))
    env.setdefault("GOMODCACHE", str(scratch / "mod"))
    return env


def _module_path(module_dir: str, module: str, env: dict[str, str]) -> Path:
    proc = subprocess.run(["go", "mod", "download", "-json", module], cwd=MODULES_DIR / module_dir, env=env,
                          capture_output=True, text=True, check=False)
    match = re.search(r'"Dir":\s*"([^"]+)"', proc.stdout)
    if proc.returncode != 0 or not match:
        raise BuildError(f"go mod download {module} (modules/{module_dir}) failed: {proc.stderr[-800:]}")
    return Path(match.group(1))


def build(log=sys.stderr, name: str = CONTROL_PLANE.name) -> Path:
    """Build every binary of the toolset into a fresh directory beside its cache entry, then move it into place."""
    target, chosen = tools_dir(name), toolset(name)
    if verified(target, name):
        return target
    vers = versions(name)
    target.parent.mkdir(parents=True, exist_ok=True)
    for stale in [*target.parent.glob(f".{target.name}.*"), *target.parent.glob(f".go-{target.name}.*")]:
        if time.time() - stale.stat().st_mtime > STALE_WORK_S:  # left by a build that was killed
            shutil.rmtree(stale, ignore_errors=True)
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    work.chmod(0o755)
    scratch = Path(tempfile.mkdtemp(prefix=f".go-{target.name}.", dir=target.parent))
    env = go_env(scratch)
    try:
        for tool in chosen.tools:
            started = time.monotonic()
            tags = ["-tags", tool.tags] if tool.tags else []
            cmd = ["nice", "-n", "10", "go", "build", *tags, "-ldflags", _ldflags(tool, vers), "-o",
                   str(work / tool.name), tool.package]
            proc = subprocess.run(cmd, cwd=MODULES_DIR / tool.module_dir, env=env, capture_output=True, text=True,
                                  check=False)
            if proc.returncode != 0:
                raise BuildError(f"go build {tool.package} (modules/{tool.module_dir}) failed:\n"
                                 f"{proc.stderr[-3000:]}")
            print(f"built {tool.name} in {time.monotonic() - started:.0f}s", file=log)
        for module_dir, module, inner, copied in chosen.data:
            shutil.copytree(_module_path(module_dir, module, env) / inner, work / copied)
            for path in (work / copied).rglob("*"):
                path.chmod(0o755 if path.is_dir() else 0o644)
        (work / "VERSIONS").write_text("".join(f"{k} {v}\n" for k, v in vers.items()) + f"go {_go_version()}\n")
        (work / SUMS).write_text("".join(f"{_sha256(work / t.name)}  {t.name}\n" for t in chosen.tools))
        if target.exists():  # a half build left by an interrupted run
            shutil.rmtree(target)
        work.rename(target)
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(scratch, ignore_errors=True)
    return target


def main(argv: list[str], name: str = CONTROL_PLANE.name) -> int:
    """`grpo-cluster build [--check]`: 0 built (or already cached), 1 not built (--check), 2 the build failed."""
    try:
        if "--check" in argv:
            ok = verified(name=name)
            print(tools_dir(name) if ok else f"missing or incomplete: {tools_dir(name)}")
            return 0 if ok else 1
        started = time.monotonic()
        path = build(name=name)
        print(f"GRPO_CLUSTER_TOOLS={path}" if name == CONTROL_PLANE.name else f"{name}: {path}")
        print(f"cluster binaries ready in {time.monotonic() - started:.0f}s", file=sys.stderr)
    except BuildError as exc:
        print(f"grpo-cluster: {exc}", file=sys.stderr)
        return 2
    return 0
