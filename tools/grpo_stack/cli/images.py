"""grpo-images: build and push every image the values select, and pin them by digest in a values overlay.

    grpo-images plan  VALUES... --registry R [--build-arg K=V]...
    grpo-images build VALUES... --registry R --build-arg K=V... --push -o images.lock.yaml
    grpo-images build VALUES... --registry R --build-arg K=V... --backend cluster --namespace NS \\
        --git-context https://github.com/ORG/REPO.git#COMMIT --registry-secret NAME --run ID --jobs-file jobs.yaml
    grpo-images lock  --from-cluster --namespace NS --run ID -o images.lock.yaml

Then `helm install ... -f VALUES -f images.lock.yaml`. The images are those of images/ that the values deploy
(the framework's Ray image, the reward service, fsx-utils, lm-eval); the overlay sets each one's repository, tag
and digest, and the Ray image's `build` (grpo-lint GRPO330 reads it). Exit status: 0 done; 1 a build or a
Job failed; 2 bad input (values, arguments, no docker).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from .conventions import Parser, Usage, command


def parser() -> argparse.ArgumentParser:
    top = Parser(prog="grpo-images", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = top.add_subparsers(dest="command", required=True, parser_class=Parser)
    for name, text in (("plan", "print which images the values select, where they go and their build arguments"),
                       ("build", "build and push them; write the digest overlay")):
        p = sub.add_parser(name, help=text)
        p.add_argument("values", nargs="+", type=Path, help="values files, merged in order (as helm -f)")
        p.add_argument("--registry", required=True, help="where to push, e.g. 123456789012.dkr.ecr.us-west-2."
                       "amazonaws.com")
        p.add_argument("--build-arg", action="append", default=[], metavar="K=V",
                       help="a build argument (EFA_INSTALLER_VERSION, EFA_INSTALLER_SHA256: images/README.md)")
        p.add_argument("--context", type=Path, default=None, help="the repository root (default: this checkout)")
        if name == "build":
            p.add_argument("--backend", choices=["local", "cluster"], default="local")
            p.add_argument("--push", action="store_true", help="local: build and push (without it: the plan only)")
            p.add_argument("-o", "--output", type=Path, default=Path("images.lock.yaml"),
                           help="local: the values overlay to write (default images.lock.yaml)")
            p.add_argument("--docker", default="docker", help="local: the docker CLI")
            p.add_argument("--namespace", help="cluster: the namespace the build Jobs run in")
            p.add_argument("--git-context", help="cluster: URL#COMMIT of this repository (the build context)")
            p.add_argument("--registry-secret", help="cluster: a kubernetes.io/dockerconfigjson Secret to push with")
            p.add_argument("--run", help="cluster: an id for this set of builds (in the Job names and labels)")
            p.add_argument("--jobs-file", type=Path, default=None,
                           help="cluster: write the Job manifests here (default: standard output)")
    lock = sub.add_parser("lock", help="write the overlay from finished in-cluster build Jobs")
    lock.add_argument("--from-cluster", action="store_true", required=True)
    lock.add_argument("--namespace", required=True)
    lock.add_argument("--run", required=True)
    lock.add_argument("-o", "--output", type=Path, default=Path("images.lock.yaml"))
    lock.add_argument("--kubectl", default="kubectl")
    return top


def _build_args(pairs: list[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise Usage(f"--build-arg {pair!r}: expected KEY=VALUE")
        out[key] = value
    return out


def _plan(args):
    from ..imagebuild.plan import plan, upstream
    from ..lint.engine import values_context
    from ..paths import REPO_ROOT

    root = args.context or REPO_ROOT
    ctx, _ = values_context([str(p) for p in args.values])
    return plan(ctx.merged, args.registry, _build_args(args.build_arg), root), upstream(ctx.merged), root


def _print_plan(builds, others) -> None:
    for i, b in enumerate(builds, 1):
        extra = "".join(f" --build-arg {k}={v}" for k, v in sorted(b.build_args.items()))
        print(f"[{i}/{len(builds)}] {b.values_key}: {b.ref} from {b.dockerfile}{extra}"
              + (f" (build {b.framework_build}: {b.note})" if b.framework_build else ""))
    for o in others:
        print(f"not built here (upstream image, pinned in the values): {o}")


def main_build(args) -> int:
    from ..imagebuild import buildkit, buildx, overlay

    builds, others, root = _plan(args)
    if args.command == "plan" or (args.backend == "local" and not args.push):
        _print_plan(builds, others)
        if args.command == "build":
            print("grpo-images: nothing built: add --push to build and push (the digest exists once pushed)")
        return 0
    if args.backend == "cluster":
        missing = [f"--{n.replace('_', '-')}" for n in ("namespace", "git_context", "registry_secret", "run")
                   if not getattr(args, n)]
        if missing:
            raise Usage(f"--backend cluster needs {', '.join(missing)}")
        docs = buildkit.jobs(builds, args.namespace, args.git_context, args.registry_secret, args.run)
        text = buildkit.manifest(docs)
        if args.jobs_file is None:
            sys.stdout.write(text)
        else:
            args.jobs_file.write_text(text)
        print(f"grpo-images: {len(docs) - 1} build Job(s) and their NetworkPolicy; kubectl apply -f them, then: "
              f"grpo-images lock --from-cluster --namespace {args.namespace} --run {args.run} -o images.lock.yaml",
              file=sys.stderr)
        return 0
    try:
        pinned = buildx.build_all(builds, root, args.docker)
    except subprocess.CalledProcessError as exc:
        print(f"grpo-images: the build failed (exit {exc.returncode}); nothing written", file=sys.stderr)
        return 1
    overlay.write(args.output, pinned)
    print(f"grpo-images: wrote {args.output} ({len(pinned)} image(s)); helm install ... -f <values> -f {args.output}")
    return 0


def main_lock(args) -> int:
    from ..imagebuild import buildkit, overlay
    from ..imagebuild.plan import ImageBuild

    proc = subprocess.run([args.kubectl, "get", "pods", "--namespace", args.namespace, "-l",
                           f"{buildkit.LABEL}={args.run}", "-o", "json"], capture_output=True, text=True)
    if proc.returncode != 0:
        print(f"grpo-images: kubectl get pods failed: {proc.stderr.strip()[:300]}", file=sys.stderr)
        return 1
    pods = json.loads(proc.stdout).get("items") or []
    pinned, problems = [], []
    for pod in pods:
        ann = pod.get("metadata", {}).get("annotations") or {}
        name = pod.get("metadata", {}).get("name", "?")
        states = [s.get("state", {}).get("terminated") for s in pod.get("status", {}).get("containerStatuses") or []]
        done = next((t for t in states if t), None)
        if not done or done.get("exitCode") != 0:
            why = "has not finished" if not done else f"failed (exit {done.get('exitCode')}; kubectl logs {name})"
            problems.append(f"{name} {why}")
            continue
        ref = ann.get("grpo-stack.io/image-ref", "")
        repository, _, tag = ref.rpartition(":")
        b = ImageBuild(pod["metadata"].get("labels", {}).get("grpo-stack.io/image", name),
                       ann.get("grpo-stack.io/values-key", ""), "", repository, tag,
                       framework_build=ann.get("grpo-stack.io/framework-build"))
        pinned.append((b, (done.get("message") or "").strip()))
    if not pods:
        problems.append(f"no build pods labelled {buildkit.LABEL}={args.run} in {args.namespace}")
    if problems:
        print("grpo-images: " + "; ".join(problems) + "; nothing written", file=sys.stderr)
        return 1
    overlay.write(args.output, pinned)
    print(f"grpo-images: wrote {args.output} ({len(pinned)} image(s))")
    return 0


@command("grpo-images", lambda: parser())
def main(argv: list[str] | None = None) -> int:
    from ..errors import InputError, printable
    from ..imagebuild.buildkit import JobError
    from ..imagebuild.buildx import BackendMissing
    from ..imagebuild.overlay import DigestError
    from ..imagebuild.plan import PlanError

    try:
        args = parser().parse_args(argv)
        return main_lock(args) if args.command == "lock" else main_build(args)
    except (Usage, PlanError, JobError, BackendMissing) as exc:
        print(printable(f"grpo-images: {exc}") if "\n" not in str(exc) else f"grpo-images: {exc}", file=sys.stderr)
        return 2
    except InputError as exc:
        print(f"{exc} [input error]", file=sys.stderr)
        return 2
    except DigestError as exc:
        print(f"grpo-images: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
