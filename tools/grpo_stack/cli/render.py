"""grpo-render: values files -> Kubernetes manifests (Helm's engine) or the job command.

  grpo-render [VALUES]... [-f FILE]... [--set KEY=VALUE]... [-o DIR] [--release NAME] [--namespace NS] [--chart DIR]
  grpo-render VALUES --job [--format explain|shell|json]
  grpo-render VALUES --job --memory [--format json]   per-GPU memory by phase and term (docs/memory.md)
  grpo-render VALUES --job --memory --from-log LOG    ... beside the peak and lengths a run of them logged

Each VALUES file is one release, over the -f files and then the --set* flags, as `helm template -f F... VALUES
--set ...` reads it; with no VALUES the -f files are one release. Several releases print one after another (with
-o DIR: DIR/<file name>/), each under a `# Values:` line; --job takes one release (docs/values-flags.md).

Exit status: 0 rendered, 2 usage or input errors, 3 an internal error (one line; --debug prints the traceback).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from ..helmvalues import add_value_options, command_line_layers, split_releases, value_options
from ..job import BuildError, build
from ..job.__main__ import render as render_job
from ..lint.engine import build_input_error, check_values, render_input_errors
from ..release import DEFAULT_NAMESPACE, DEFAULT_RELEASE
from ..render import Rendered, RenderError, job_spec, render
from ..values import as_values_file, release_file
from .conventions import command
from .lint import Parser, check_release_args, guarded, use_chart_option


def parser() -> argparse.ArgumentParser:
    p = Parser(prog="grpo-render", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("values", nargs="*", help="values files, each its own release")
    add_value_options(p, files_help="a values file layered under each VALUES file, in order, as helm -f layers it "
                      "(repeatable); with no VALUES, the -f files are the release")
    p.add_argument("-o", "--output-dir", help="write one file per object here instead of stdout")
    p.add_argument("--release", default=DEFAULT_RELEASE, help=f"release name (default: {DEFAULT_RELEASE})")
    p.add_argument("--namespace", default=DEFAULT_NAMESPACE,
                   help=f"release namespace (default: {DEFAULT_NAMESPACE}, as grpo-lint)")
    p.add_argument("--job", action="store_true", help="print the training command the recipe will run")
    p.add_argument("--format", choices=["explain", "shell", "json"], default="explain",
                   help="with --job: explain (each value and where it came from), shell, json")
    p.add_argument("--memory", action="store_true",
                   help="with --job: the per-GPU memory breakdown by phase and term (GiB); json with --format json")
    p.add_argument("--from-log", metavar="LOG", action="append",
                   help="with --memory: a run's log (verl's file-tracker steps, a miles log, a driver log with "
                        "vLLM's CUDA-graph lines; repeat for several) whose peak memory, lengths and graph pool are "
                        "printed beside the prediction")
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
    options = value_options(args)
    base, roots = split_releases(args.values, options.files)
    if not roots:
        print("grpo-render: name a values file (or the release's files with -f FILE)", file=sys.stderr)
        return 2
    if args.job and len(roots) > 1:
        print(f"grpo-render: --job reads one release and {len(roots)} values files were given, each its own "
              "release; layer files with -f FILE", file=sys.stderr)
        return 2
    set_layers = command_line_layers(options)
    releases = [(root, _release([*base, root, *set_layers], args)) for root in roots]
    rendered = [(root, r) for root, r in releases if r is not None]
    if args.job:
        return _job(rendered[0][1], args) if rendered else 2
    if args.output_dir:
        try:
            _write_files(rendered, Path(args.output_dir))
        except OSError as exc:
            print(f"grpo-render: {args.output_dir}: cannot write: {exc.strerror or exc}", file=sys.stderr)
            return 2
    else:
        several = len(rendered) > 1
        for root, release in rendered:
            sys.stdout.write((f"# Values: {root}\n" if several else "") + as_stream(release.rendered))
    return 0 if len(rendered) == len(releases) else 2


def _release(layers: list, args) -> Rendered | None:
    """One release rendered, or None with its errors printed."""
    try:
        files = [as_values_file(layer) for layer in layers]
        checked = check_values(files)
        if isinstance(checked, list):
            for err in checked:
                print(f"grpo-render: {err}", file=sys.stderr)
            return None
        try:
            return _Release(files, render(checked[0], release=args.release, namespace=args.namespace))
        except RenderError as exc:
            for err in render_input_errors(files, exc):
                print(f"grpo-render: {err}", file=sys.stderr)
            return None
    except InputError as exc:
        print(f"grpo-render: {exc}", file=sys.stderr)
        return None


@dataclass
class _Release:
    files: list
    rendered: Rendered


def _job(release: _Release, args) -> int:
    try:
        spec = job_spec(release.rendered)
    except RenderError as exc:  # an evaluation-only release, or raycluster turned off
        print(f"grpo-render: {release_file(release.files).path}: --job: {exc}; this release runs no training job",
              file=sys.stderr)
        return 2
    try:
        built = build(spec)
    except BuildError as exc:
        print(f"grpo-render: {build_input_error(release.files, exc)}", file=sys.stderr)
        return 2
    if args.memory:
        return _memory(spec, built, args.format, args.from_log)
    print(render_job(built, args.format))
    return 0


def _write_files(releases: list[tuple[str, _Release]], out: Path) -> None:
    """Each release's objects as files under `out`, in a folder per values file when there are several."""
    if len(releases) == 1:
        write_objects(releases[0][1].rendered, out)
        return
    folders = _folders([root for root, _ in releases])
    for root, release in releases:
        write_objects(release.rendered, out / folders[root])


def _folders(roots: list[str]) -> dict[str, str]:
    """A folder name per values file: its stem, numbered where two files share one."""
    out: dict[str, str] = {}
    for root in roots:
        stem = Path(root).stem or "values"
        name, n = stem, 1
        while name in out.values():
            n += 1
            name = f"{stem}-{n}"
        out[root] = name
    return out


def _memory(spec_data, built, fmt: str, logs: list[str] | None) -> int:
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
    if logs:
        try:
            logged = calibrate.read(*(Path(log) for log in logs))
        except OSError as exc:
            print(f"grpo-render: {exc.filename}: cannot read: {exc.strerror or exc}", file=sys.stderr)
            return 2
        if logged is None:
            print(f"grpo-render: {', '.join(logs)}: no verl step record with perf/max_memory_allocated_gb, no miles "
                  "Memory-Usage line and no vLLM CUDA-graph line", file=sys.stderr)
            return 2
    if fmt == "json":
        out = view.as_dict(report)
        print(json.dumps({**out, "measured": calibrate.as_dict(report, logged)} if logged else out, indent=2))
    else:
        print(view.as_text(report) + (calibrate.as_text(report, logged) if logged else ""))
    return 0


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
