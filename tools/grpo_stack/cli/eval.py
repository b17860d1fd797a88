"""grpo-eval: evaluation after training.

  grpo-eval compare --run DIR --baseline DIR [--tasks IDS] [--curve STEPS --curve-dir TEMPLATE]
                    [--format markdown|json] [--plot FILE.png]

Exit status: 0 everything compared; 1 a run, task or metric is missing (reported, never shown as 0.0);
2 unusable input (malformed results, unknown task id, runs that are not comparable, bad arguments).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..errors import printable


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
    return p


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


def compare_main(args) -> int:
    from ..eval.compare import as_json, compare, markdown, plot
    from ..eval.results import EvalInputError, MissingData

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


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    return {"compare": compare_main}[args.command](args)


if __name__ == "__main__":
    raise SystemExit(main())
