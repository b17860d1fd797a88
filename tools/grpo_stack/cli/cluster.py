"""grpo-cluster: a real Kubernetes control plane on this machine's loopback, shaped for your values files.

  grpo-cluster up VALUES... [--namespace NS] [--release NAME] [--dir DIR] [--kubectl PATH]
  grpo-cluster status [--dir DIR]
  grpo-cluster down [--dir DIR]
  grpo-cluster build [--check]

up starts etcd, kube-apiserver, kube-scheduler, kube-controller-manager, kwok and the KubeRay operator on
127.0.0.1, with kwok nodes of every instance type the values place pods on (GPUs, EFA, the labels they select),
the namespace with the hf-token Secret (a placeholder token) and the FSx PVC bound to a static PV, then prints the
KUBECONFIG to use with helm, kubectl, grpo-lint --cluster and run-on-cluster.sh --dry-run. kwok runs no
containers: this proves admission, scheduling and reconciliation, never execution (docs/local-cluster.md).
The first start builds the binaries from pinned Go modules (needs Go 1.26; cached, ~17 min cold on 2 cores).
Exit status: 0 done, 1 status found no cluster, 2 bad input, a failed build or a start that failed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

from .conventions import Parser, Usage, command


def parser() -> argparse.ArgumentParser:
    from ..localcluster.session import default_dir

    top = Parser(prog="grpo-cluster", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = top.add_subparsers(dest="command", required=True, parser_class=Parser)
    dir_help = f"state directory of the cluster (default: {default_dir()})"
    u = sub.add_parser("up", help="start a local cluster shaped for these values files")
    u.add_argument("values", nargs="+", type=Path, help="values files, layered as helm -f layers them")
    u.add_argument("--namespace", default="grpo", help="the release namespace to prepare (default: grpo)")
    u.add_argument("--release", default="grpo", help="the release name the values are rendered as (default: grpo)")
    u.add_argument("--dir", type=Path, default=None, help=dir_help)
    u.add_argument("--kubectl", default=None, help="kubectl binary (default: $GRPO_KUBECTL, else kubectl on PATH)")
    for name, text in (("status", "show whether the cluster is up, and its components"),
                       ("down", "stop the cluster and every process it started")):
        s = sub.add_parser(name, help=text)
        s.add_argument("--dir", type=Path, default=None, help=dir_help)
    b = sub.add_parser("build", help="build the binaries from the pinned Go modules (idempotent)")
    b.add_argument("--check", action="store_true", help="exit 1 unless a complete, verified build is cached")
    b.add_argument("--toolset", default="control-plane",
                   help="which binaries: control-plane (default) or an add-on's (grpo_stack.localcluster.binaries)")
    return top


@command("grpo-cluster", lambda: parser())
def main(argv: list[str] | None = None) -> int:
    from ..errors import printable

    try:
        args = parser().parse_args(argv)
        if args.command == "build":
            from ..localcluster import binaries

            return binaries.main(["--check"] if args.check else [], args.toolset)
        directory = args.dir or _default_dir()
        if args.command == "up":
            return _up(args, directory)
        if args.command == "down":
            return _down(directory)
        return _status(directory)
    except Usage as exc:
        print(printable(f"grpo-cluster: {exc}"), file=sys.stderr)
        return 2


def _default_dir() -> Path:
    from ..localcluster.session import default_dir

    return default_dir()


def _kubectl(given: str | None) -> str:
    found = given or os.environ.get("GRPO_KUBECTL") or shutil.which("kubectl")
    if not found or not (Path(found).is_file() or shutil.which(found)):
        raise Usage("no kubectl: pass --kubectl PATH or set GRPO_KUBECTL (kubectl 1.34 talks to this API server)")
    return str(Path(found).resolve()) if Path(found).is_file() else str(shutil.which(found))


def _up(args, directory: Path) -> int:
    from ..errors import InputError
    from ..localcluster import binaries
    from ..localcluster.plan import PlanError, plan
    from ..localcluster.session import SessionError, up

    kubectl = _kubectl(args.kubectl)
    for path in args.values:
        if not path.is_file():
            raise Usage(f"{path}: no such values file")
    try:
        cluster_plan = plan([str(p) for p in args.values], args.namespace, args.release)
    except InputError as exc:
        print(f"grpo-cluster: {exc}", file=sys.stderr)
        return 2
    except PlanError as exc:
        raise Usage(str(exc)) from None
    try:
        if not binaries.verified():
            print("grpo-cluster: building the control plane from pinned Go modules (first start only; ~17 min cold "
                  "on 2 cores)", file=sys.stderr)
            binaries.build()
        state = up(directory, cluster_plan, kubectl)
    except (binaries.BuildError, SessionError) as exc:
        print(f"grpo-cluster: {exc}", file=sys.stderr)
        return 2
    shapes = ", ".join(f"{n.count} x {n.instance_type}" for n in cluster_plan.nodes)
    print(f"local cluster up at {state.server}: {shapes}; namespace {state.namespace} with its "
          f"{cluster_plan.namespace.secret} Secret and {cluster_plan.namespace.claim} PVC (Bound)")
    print(f"export KUBECONFIG={state.kubeconfig}")
    print(f"stop it with: grpo-cluster down --dir {directory}")
    return 0


def _down(directory: Path) -> int:
    from ..localcluster.session import down

    print(f"local cluster in {directory} stopped" if down(directory) else f"no local cluster running in {directory}")
    return 0


def _status(directory: Path) -> int:
    from ..localcluster.session import alive, running

    state = running(directory)
    if state is None:
        print(f"no local cluster running in {directory}")
        return 1
    print(f"up: {state.server}, holder pid {state.pid}, namespace {state.namespace}, {len(state.nodes)} node(s)")
    for name, pid in state.components.items():
        print(f"  {name:<24} pid {pid:<8} {'running' if alive(pid) else 'EXITED'}")
    print(f"KUBECONFIG={state.kubeconfig}")
    return 0
