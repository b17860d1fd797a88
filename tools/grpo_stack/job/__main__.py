"""`python -m grpo_stack.job JOB_JSON [--format argv|shell|explain|json]`: used by the recipe in the head pod."""

from __future__ import annotations

import argparse
import json
import shlex
import sys

from . import BuildError, build


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grpo_stack.job", description=__doc__)
    parser.add_argument("spec", help="job.json rendered by the chart (mounted at /etc/grpo-stack/job.json)")
    parser.add_argument("--format", choices=["argv", "shell", "explain", "json"], default="shell")
    args = parser.parse_args(argv)
    try:
        with open(args.spec, encoding="utf-8") as fh:
            spec = json.load(fh)
        built = build(spec)
    except (OSError, json.JSONDecodeError, BuildError) as exc:
        print(f"{args.spec}: {exc}", file=sys.stderr)
        return 2
    if args.format == "argv":  # NUL-terminated fields, no newline: safe to read with `mapfile -d ''`
        sys.stdout.write("".join(f"{a}\0" for a in built.argv()))
    else:
        print(render(built, args.format))
    return 0


def render(built, fmt: str) -> str:
    if fmt == "shell":
        return shlex.join(built.argv())
    if fmt == "json":
        return json.dumps({"argv": built.argv(), "notes": list(built.notes), "env": dict(built.env),
                           "prepare": [{"name": s.name, "argv": list(s.argv), "numGpus": s.num_gpus,
                                        "output": s.output, "manifest": s.manifest, "why": s.why}
                                       for s in built.prepare]}, indent=2)
    width = max(len(a.key) for a in built.args)
    lines = []
    for i, s in enumerate(built.prepare, 1):
        lines += [f"# before training, step {i}: {s.name} ({s.why}); skipped when {s.output} holds a matching "
                  f"manifest", f"#   {shlex.join(s.argv)}"]
    lines += [" ".join(built.entrypoint)]
    lines += [f"  {a.key:<{width}}  {_shown(a.value):<40}  # {a.source}" for a in built.args]
    if built.extra:
        lines += [f"  {shlex.join(built.extra)}  # values: extraArgs"]
    lines += [f"# runtime env: {k}={v}" for k, v in built.env]
    lines += [f"# {n}" for n in built.notes]
    return "\n".join(lines)


def _shown(value: object) -> str:
    """A list shows as the separate argv tokens it becomes, with their count."""
    if isinstance(value, list | tuple):
        return f"{shlex.join(map(str, value))}  ({len(value)} values)"
    return str(value)


if __name__ == "__main__":
    raise SystemExit(main())
