"""grpo-render: values files -> Kubernetes manifests (Helm's engine) or the job command.

  grpo-render VALUES... [-o DIR] [--release NAME] [--namespace NS] [--chart DIR]
  grpo-render VALUES... --job [--format explain|shell|json]
  grpo-render VALUES... --job --memory [--format json]   per-GPU memory by phase and term (docs/memory.md)
  grpo-render VALUES... --job --memory --from-log LOG    ... beside the peak and lengths a run of them logged

Exit status: 0 rendered, 2 usage or input errors, 3 an internal error (one line; --debug prints the traceback).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..errors import InputError
from ..job import BuildError, build
from ..job.__main__ import render as render_job
from ..lint.engine import build_input_error, render_input_errors
from ..release import DEFAULT_NAMESPACE, DEFAULT_RELEASE
from ..render import RenderError, job_spec, merged_values, render
from ..values import load_values_file, merge_user_values, schema_violations, shape_errors, violation_errors
from .conventions import command
from .lint import Parser, check_release_args, guarded, use_chart_option


def parser() -> argparse.ArgumentParser:
    p = Parser(prog="grpo-render", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("values", nargs="+", help="values files, merged in order like helm -f")
    p.add_argument("-o", "--output-dir", help="write one file per object here instead of stdout")
    p.add_argument("--release", default=DEFAULT_RELEASE, help=f"release name (default: {DEFAULT_RELEASE})")
    p.add_argument("--namespace", default=DEFAULT_NAMESPACE,
                   help=f"release namespace (default: {DEFAULT_NAMESPACE}, as grpo-lint)")
    p.add_argument("--job", action="store_true", help="print the training command the recipe will run")
    p.add_argument("--format", choices=["explain", "shell", "json"], default="explain",
                   help="with --job: explain (each value and where it came from), shell, json")
    p.add_argument("--memory", action="store_true",
                   help="with --job: the per-GPU memory breakdown by phase and term (GiB); json with --format json")
    p.add_argument("--from-log", metavar="LOG",
                   help="with --memory: a run's log (verl's file-tracker steps, or a miles log) whose peak memory "
                        "and lengths are printed beside the prediction")
    p.add_argument("--chart", help="the grpo-stack chart directory (default: the one shipped in the package)")
    p.add_argument("--debug", action="store_true", help="on an internal error, print the traceback")
    return p


@command("grpo-render", lambda: parser())
def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    return guarded("grpo-render", lambda: _render(parser().parse_args(argv)), debug="--debug" in argv)


def _render(args) -> int:
    check_release_args(args.release, args.namespace)
    if args.memory and not args.job:
        print("grpo-render: --memory needs --job (the memory model reads the job the values build)", file=sys.stderr)
        return 2
    if args.from_log and not args.memory:
        print("grpo-render: --from-log needs --job --memory", file=sys.stderr)
        return 2
    if args.chart:
        use_chart_option(args.chart)
    try:
        files = [load_values_file(v) for v in args.values]
        user = merge_user_values(files)
        violations = shape_errors(files, user) or violation_errors(files, schema_violations(merged(files, user)))
        if violations:
            for err in violations:
                print(f"grpo-render: {err}", file=sys.stderr)
            return 2
        try:
            rendered = render(user, release=args.release, namespace=args.namespace)
        except RenderError as exc:
            for err in render_input_errors(files, exc):
                print(f"grpo-render: {err}", file=sys.stderr)
            return 2
        if args.job:
            try:
                built = build(job_spec(rendered))
            except BuildError as exc:
                raise build_input_error(files, exc) from None
            if args.memory:
                return _memory(job_spec(rendered), built, args.format, args.from_log)
            print(render_job(built, args.format))
            return 0
    except InputError as exc:
        print(f"grpo-render: {exc}", file=sys.stderr)
        return 2
    except RenderError as exc:
        print(f"grpo-render: {', '.join(args.values)}: {exc}", file=sys.stderr)
        return 2
    if args.output_dir:
        try:
            write_objects(rendered, Path(args.output_dir))
        except OSError as exc:
            print(f"grpo-render: {args.output_dir}: cannot write: {exc.strerror or exc}", file=sys.stderr)
            return 2
    else:
        sys.stdout.write(as_stream(rendered))
    return 0


def _memory(spec_data, built, fmt: str, log: str | None) -> int:
    from ..job import Spec
    from ..memory import calibrate, estimate, view
    from ..memory.resolve import run_for

    run = run_for(Spec(spec_data), built)
    if run is None:
        print("grpo-render: --memory: the GPU's memory is not known (global.cluster.gpuInstanceType is not in the "
              "instance catalogue and global.instanceTypes states no gpuMemory for it) or the model shape has no "
              "vocabulary size: no memory model", file=sys.stderr)
        return 2
    report = estimate(run)
    logged = None
    if log:
        try:
            logged = calibrate.read(Path(log))
        except OSError as exc:
            print(f"grpo-render: {log}: cannot read: {exc.strerror or exc}", file=sys.stderr)
            return 2
        if logged is None:
            print(f"grpo-render: {log}: no verl step record with perf/max_memory_allocated_gb and no miles "
                  "Memory-Usage line", file=sys.stderr)
            return 2
    if fmt == "json":
        out = view.as_dict(report)
        print(json.dumps({**out, "measured": calibrate.as_dict(report, logged)} if logged else out, indent=2))
    else:
        print(view.as_text(report) + (calibrate.as_text(report, logged) if logged else ""))
    return 0


def merged(files, user):
    try:
        return merged_values(user)
    except Exception as exc:  # noqa: BLE001 - helm_python raises its own error types on values it cannot coalesce
        raise InputError(files[-1].path, f"cannot merge values: {exc}") from None


def as_stream(rendered) -> str:
    """What `helm template` prints: each template under a `# Source:` comment, documents separated by ---."""
    return "".join(f"---\n# Source: {t}\n{text.strip()}\n" for t, text in rendered.manifests.items())


def write_objects(rendered, out: Path) -> None:
    import yaml

    out.mkdir(parents=True, exist_ok=True)
    for o in rendered.objects:
        name = f"{o.kind.lower()}-{o.name}.yaml"
        (out / name).write_text(yaml.safe_dump(o.obj, sort_keys=False))
    print(f"wrote {len(rendered.objects)} objects to {out}", file=sys.stderr)


if __name__ == "__main__":
    raise SystemExit(main())
