"""grpo-run: a release's run on day 2, through the Kubernetes API (docs/day-2.md).
  grpo-run submit RELEASE [-n NS] [--dry-run] [--follow] [--overwrite-checkpoints] [--skip-check CODE]...
  grpo-run status RELEASE [-n NS]
  grpo-run logs RELEASE [-n NS] [--job ID] [--follow] [--stored]
  grpo-run stop RELEASE [-n NS] [--job ID]
  grpo-run list [RELEASE] [-n NS]
The release's Ray cluster is found by the chart's labels (app.kubernetes.io/instance=RELEASE): its RayCluster
(cluster mode) or its RayJob (job mode). status, logs, stop and `list RELEASE` read the run where it is, in the
Ray head pod (Ray's job API, the attempts and logs on the run's storage). submit runs recipes/grpo/run-on-cluster.sh.
stop can save nothing the frameworks had not saved: verl and miles checkpoint only at a step boundary, and
`ray job stop` kills the driver 3 s after SIGTERM.
Exit status: 0 done; 2 bad input, no such release, a cluster that cannot be reached, nothing to stop; submit: its
own (docs/submit.md).
"""

from __future__ import annotations

import argparse
import sys

from .conventions import Parser, Usage, command

VERBS = ("submit", "status", "logs", "stop", "list")


def parser() -> argparse.ArgumentParser:
    top = Parser(prog="grpo-run", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = top.add_subparsers(dest="command", required=True, parser_class=Parser)

    def verb(name: str, text: str, release: str = "required") -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=text)
        if release == "required":
            p.add_argument("release", help="the Helm release")
        else:
            p.add_argument("release", nargs="?", help="the Helm release (without it: the releases of the namespace)")
        p.add_argument("-n", "--namespace", help="the release's namespace (default: the kubeconfig context's)")
        p.add_argument("--kubeconfig", help="kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)")
        p.add_argument("--context", help="kubeconfig context (default: the current one)")
        return p

    s = verb("submit", "submit the release's run (recipes/grpo/run-on-cluster.sh)")
    s.add_argument("--dry-run", action="store_true", help="every check, the banner and the command; submit nothing")
    s.add_argument("--follow", action="store_true", help="stream the logs and supervise the run to its end")
    s.add_argument("--overwrite-checkpoints", action="store_true",
                   help="with resume.mode disable, start at step 0 over an earlier run's checkpoints")
    s.add_argument("--skip-check", action="append", default=[], metavar="CODE", help="skip one job check")
    s.add_argument("--wait-timeout", help="how long to wait for the Ray pods (default 30m)")
    s.add_argument("--script", help="run-on-cluster.sh to run (default: the one of this checkout)")
    verb("status", "phase, attempt, step of total, last checkpoint, why the last attempt ended")
    lg = verb("logs", "the run's driver log: live from Ray, or the copy stored on the run's storage")
    lg.add_argument("--job", help="the Ray job id (default: the latest training job)")
    lg.add_argument("--follow", action="store_true", help="keep streaming until the job ends")
    lg.add_argument("--stored", action="store_true", help="the stored copy, not Ray's")
    st = verb("stop", "stop the running job (ray job stop): saves nothing the framework had not saved")
    st.add_argument("--job", help="the Ray job id (default: every PENDING or RUNNING job of the submit)")
    verb("list", "the runs of a release, or the releases of a namespace", release="optional")
    return top


@command("grpo-run", lambda: parser())
def main(argv: list[str] | None = None) -> int:
    from ..errors import printable
    from ..runctl import Refused

    try:
        args = parser().parse_args(argv)
        if args.command == "submit":
            return _submit(args)
        return _cluster_verb(args)
    except (Usage, Refused) as exc:
        print(printable(f"grpo-run: {exc}"), file=sys.stderr)
        return 2


def _submit(args) -> int:
    from ..runctl import commands

    if args.context:
        raise Usage("submit --context: run-on-cluster.sh uses the kubeconfig's current context; select it with "
                    "`kubectl config use-context` or a --kubeconfig that has it current")
    if not args.namespace:
        raise Usage("submit needs -n/--namespace (run-on-cluster.sh takes no default)")
    extra = [*(["--dry-run"] if args.dry_run else []), *(["--follow"] if args.follow else []),
             *(["--overwrite-checkpoints"] if args.overwrite_checkpoints else []),
             *(a for code in args.skip_check for a in ("--skip-check", code)),
             *(["--wait-timeout", args.wait_timeout] if args.wait_timeout else [])]
    return commands.submit(args.namespace, args.release, extra, args.kubeconfig, args.script)


def _cluster_verb(args) -> int:
    from ..runctl import commands
    from ..runctl.kube import Kube

    kube = Kube(args.kubeconfig, args.context)
    namespace = args.namespace or kube.default_namespace
    if args.command == "status":
        print("\n".join(commands.status(kube, namespace, args.release)))
        return 0
    if args.command == "logs":
        return commands.logs(kube, namespace, args.release, args.job, args.follow, args.stored)
    if args.command == "stop":
        return commands.stop(kube, namespace, args.release, args.job)
    rows = (commands.list_runs(kube, namespace, args.release) if args.release
            else commands.list_releases(kube, namespace))
    print("\n".join(rows))
    return 0
