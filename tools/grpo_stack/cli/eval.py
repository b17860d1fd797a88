"""grpo-eval: evaluation after training.

  grpo-eval compare --run DIR --baseline DIR [--tasks IDS] [--curve STEPS --curve-dir TEMPLATE]
                    [--format markdown|json] [--plot FILE.png]
  grpo-eval merge --values FILE... --step N [--storage-root /fsx] [--checkpoint DIR | --adapter DIR [--base DIR]]
                  [--target DIR] [--python PYTHON] [--allow-unverified]
  grpo-eval check-adapter DIR --values FILE... [--allow-unverified]

Exit status: 0 done; 1 missing data (a run, task or metric: reported, never shown as 0.0), a merge that failed,
or an adapter that does not match the values; 2 unusable input (malformed results or values, unknown task id,
runs that are not comparable, bad arguments).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from ..errors import printable
from .conventions import command


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2 (argparse prints usage too)
        print(printable(f"{self.prog}: {message}"), file=sys.stderr)
        raise SystemExit(2)


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog="grpo-eval", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    c = sub.add_parser("compare", help="compare lm-eval results of a run with a baseline")
    c.add_argument("--run", required=True, type=Path, help="lm-eval output of the run (directory or results file)")
    c.add_argument("--baseline", required=True, type=Path, help="lm-eval output of the baseline")
    c.add_argument("--tasks", help="comma-separated task ids to compare (default: every task either run reports)")
    c.add_argument("--curve", help="comma-separated training steps, e.g. 50,100,150 (needs --curve-dir)")
    c.add_argument("--curve-dir", help="lm-eval output of each step, with {step}, e.g. eval-results/exp/step-{step}")
    c.add_argument("--format", choices=["markdown", "json"], default="markdown")
    c.add_argument("--plot", type=Path, help="write a PNG of the curve here (needs --curve)")
    m = sub.add_parser("merge", help="merge a verl checkpoint or a LoRA adapter into a Hugging Face directory")
    m.add_argument("--values", required=True, nargs="+", type=Path, help="the run's values files, layered like -f")
    m.add_argument("--step", required=True, type=_step, help="training step of the checkpoint")
    m.add_argument("--storage-root", type=Path, default=Path("/fsx"),
                   help="where global.storage is mounted (default /fsx)")
    m.add_argument("--checkpoint", type=Path,
                   help="verl actor checkpoint (default: <checkpointDir>/global_step_N/actor)")
    m.add_argument("--adapter", type=Path, help="a PEFT LoRA adapter directory to fold into the base model instead")
    m.add_argument("--base", type=Path, help="with --adapter: base model (default: global.job.model.path)")
    m.add_argument("--target", type=Path, help="output (default: <checkpointDir>/global_step_N/merged)")
    m.add_argument("--python", default=os.environ.get("GRPO_MERGE_PYTHON", sys.executable),
                   help="interpreter with verl, torch and peft (default: $GRPO_MERGE_PYTHON or this one)")
    m.add_argument("--allow-unverified", action="store_true",
                   help="merge an adapter whose adapter_config.json does not match the values")
    a = sub.add_parser("check-adapter", help="fail unless adapter_config.json matches the run's values")
    a.add_argument("adapter", type=Path)
    a.add_argument("--values", required=True, nargs="+", type=Path)
    a.add_argument("--allow-unverified", action="store_true", help="report a mismatch but exit 0")
    return p


def _step(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a step number")
    return int(text)


def merge_main(args) -> int:
    from ..errors import InputError
    from ..eval.merge import MergeError, merge

    if args.checkpoint and args.adapter:
        print("grpo-eval merge: give --checkpoint or --adapter, not both", file=sys.stderr)
        return 2
    try:
        out = merge(args.values, args.step, args.storage_root, args.python, args.checkpoint, args.target,
                    args.adapter, args.base, args.allow_unverified)
    except InputError as exc:
        print(f"grpo-eval merge: {exc}", file=sys.stderr)
        return 2
    except (MergeError, OSError) as exc:
        print(printable(f"grpo-eval merge: {exc}"), file=sys.stderr)
        return 1
    print(f"merged into {out} (provenance: {out / 'grpo-provenance.json'})")
    return 0


def check_adapter_main(args) -> int:
    from ..errors import InputError
    from ..eval.merge import load_job
    from ..eval.provenance import AdapterMismatch, check_adapter

    try:
        info = check_adapter(args.adapter, load_job(args.values))
    except InputError as exc:
        print(f"grpo-eval check-adapter: {exc}", file=sys.stderr)
        return 2
    except AdapterMismatch as exc:
        if args.allow_unverified:
            print(printable(f"grpo-eval check-adapter: UNVERIFIED (allowed): {exc}"), file=sys.stderr)
            return 0
        print(printable(f"grpo-eval check-adapter: {exc}"), file=sys.stderr)
        return 1
    print(f"{args.adapter}: r {info['r']}, lora_alpha {info['lora_alpha']}, target_modules "
          f"{info['target_modules']} match the values")
    return 0


def _steps(args) -> list[tuple[int, Path]] | None:
    if not args.curve and not args.curve_dir and not args.plot:
        return None
    if not args.curve or not args.curve_dir or "{step}" not in args.curve_dir:
        raise ValueError("--curve STEPS, --curve-dir TEMPLATE (containing {step}) and --plot go together")
    steps = []
    for s in args.curve.split(","):
        if not s.strip().isdigit():
            raise ValueError(f"--curve: {s.strip()!r} is not a step number")
        steps.append(int(s))
    if len(set(steps)) != len(steps):
        raise ValueError("--curve: a step is listed twice")
    return [(s, Path(args.curve_dir.replace("{step}", str(s)))) for s in steps]


PLOT_EXTRA = "plot"  # tools/pyproject.toml [project.optional-dependencies]


def _have_matplotlib() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def compare_main(args) -> int:
    from ..eval.compare import as_json, compare, markdown, plot
    from ..eval.results import EvalInputError, MissingData

    if args.plot and not _have_matplotlib():
        print(f"grpo-eval compare: --plot needs matplotlib, an optional extra: pip install './tools[{PLOT_EXTRA}]'",
              file=sys.stderr)
        return 2
    try:
        steps = _steps(args)
        tasks = [t.strip() for t in args.tasks.split(",")] if args.tasks else None
        result = compare(args.run, args.baseline, tasks, steps)
    except (ValueError, EvalInputError) as exc:
        print(printable(f"grpo-eval compare: {exc}"), file=sys.stderr)
        return 2
    except MissingData as exc:
        print(printable(f"grpo-eval compare: missing: {exc}"), file=sys.stderr)
        return 1
    print(json.dumps(as_json(result), indent=2) if args.format == "json" else markdown(result), end="")
    if args.format == "json":
        print()
    if args.plot:
        try:
            plot(result, args.plot)
        except OSError as exc:
            print(printable(f"grpo-eval compare: cannot write {args.plot}: {exc}"), file=sys.stderr)
            return 2
    for m in result.missing:
        print(printable(f"grpo-eval compare: missing: {m}"), file=sys.stderr)
    return 1 if result.missing else 0


@command("grpo-eval", lambda: parser())
def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    return {"compare": compare_main, "merge": merge_main, "check-adapter": check_adapter_main}[args.command](args)


if __name__ == "__main__":
    raise SystemExit(main())
