"""grpo-data: prepare GRPO training data and an audited validation split.

  grpo-data prepare --dataset NAME[:WEIGHT]... [--from-file FILE[:WEIGHT]]... --output OUT.parquet|OUT.jsonl...
  grpo-data holdout --train TRAIN --dataset NAME[:ROWS]... --output VAL.parquet|VAL.jsonl...
  grpo-data holdout --train TRAIN --val VAL          (audit an existing validation file)
  grpo-data datasets                                  (the registry: name, repository, revision, splits)
  grpo-data version [--expect VERSION]                (exit 1 when the installed tools are another version)

Every source is pinned to a commit; --revision NAME=<commit> reads another one, and a branch given there is
refused unless --allow-mutable lets it through, which the manifest records.
Exit status: 0 done, 1 the holdout audit found overlap above --max-overlap, 2 bad input.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from pathlib import Path

from ..data.errors import DataInputError
from ..errors import printable
from .conventions import Parser, Usage, check_endpoint, command, tools_version

# The data modules import datasets and pyarrow (seconds); `version` (the pod's readiness probe) must not.




def _sources(p: argparse.ArgumentParser) -> None:
    p.add_argument("--source-dir", action="append", default=[], metavar="NAME=DIR",
                   help="read NAME from a local copy of its repository at the pinned revision instead of the Hub")
    p.add_argument("--revision", action="append", default=[], metavar="NAME=COMMIT",
                   help="read NAME at another commit than its pinned one")
    p.add_argument("--allow-mutable", action="store_true",
                   help="accept a branch as revision; the manifest records it as mutable")
    p.add_argument("--cache-dir", type=Path,
                   default=Path(os.environ.get("HF_HOME", Path.home() / ".cache" / "huggingface")) / "grpo-data",
                   help="where Hub downloads go (default: $HF_HOME/grpo-data)")
    p.add_argument("--endpoint", help="Hub endpoint (default: huggingface_hub's, i.e. $HF_ENDPOINT or the Hub)")
    p.add_argument("--seed", type=int, default=0, help="mixing / sampling seed (default 0)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.add_argument("--framework", choices=("verl", "miles"),
                   help="the run's framework: refuse an output whose suffix gives the other framework's layout "
                        "(.parquet is verl's, .jsonl miles')")


def parser() -> argparse.ArgumentParser:
    top = Parser(prog="grpo-data", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    top.add_argument("--version", action="version", version=f"grpo-data {tools_version()}")
    sub = top.add_subparsers(dest="command", required=True, parser_class=Parser)

    pp = sub.add_parser("prepare", help="sources -> one prepared training file (verl parquet / miles JSONL)")
    pp.add_argument("--dataset", action="append", default=[], metavar="NAME[:WEIGHT]")
    pp.add_argument("--from-file", action="append", default=[], metavar="FILE[:WEIGHT]",
                    help="an already prepared verl parquet file to mix in")
    pp.add_argument("--split", default="train", help="split of each --dataset (default train)")
    pp.add_argument("--output", action="append", required=True, type=Path, metavar="OUT.parquet|OUT.jsonl")
    pp.add_argument("--keep-duplicates", action="store_true", help="keep repeated problems within a source")
    pp.add_argument("--pass-rate-column", default="pass_rate",
                    help="difficulty column, used where a source has it (default pass_rate)")
    pp.add_argument("--min-pass-rate", type=float, default=0.0)
    pp.add_argument("--max-pass-rate", type=float, default=1.0)
    _sources(pp)

    hp = sub.add_parser("holdout", help="build the validation split and audit its overlap with training")
    hp.add_argument("--train", required=True, type=Path, help="the prepared training file (.parquet or .jsonl)")
    hp.add_argument("--dataset", action="append", default=[], metavar="NAME[:ROWS]",
                    help="validation source; ROWS caps it (a seeded sample)")
    hp.add_argument("--split", default=None, help="split of each --dataset (default: test, else valid)")
    hp.add_argument("--val", type=Path, help="audit this existing validation file instead of building one")
    hp.add_argument("--output", action="append", default=[], type=Path, metavar="VAL.parquet|VAL.jsonl")
    hp.add_argument("--max-overlap", type=float, default=0.0,
                    help="highest overlap percentage any source may have (default 0)")
    hp.add_argument("--allow-overlap", action="store_true", help="report overlap above the threshold, exit 0")
    hp.add_argument("--drop-overlap", action="store_true", help="remove overlapping problems from the split")
    _sources(hp)

    sub.add_parser("datasets", help="list the registry")
    vp = sub.add_parser("version", help="print the tools' version; with --expect, exit 1 on any other")
    vp.add_argument("--expect", help="the version this release needs (the fsx-utils readiness probe)")
    return top


@command("grpo-data", lambda: parser())
def main(argv: list[str] | None = None) -> int:
    try:
        args = parser().parse_args(argv)
        if args.command == "version":
            return _version(args.expect)
        if args.command == "datasets":
            return _list()
        check_endpoint(args.endpoint)  # before any source is read: `::::` is a usage error, not a traceback
        if getattr(args, "no_progress", False):
            import datasets

            datasets.disable_progress_bars()
        if args.command == "prepare":
            return _prepare(args)
        return _holdout(args)
    except (Usage, DataInputError) as exc:
        print(printable(f"grpo-data: {exc}"), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("grpo-data: interrupted", file=sys.stderr)
        return 130


def _version(expect: str | None) -> int:
    have = tools_version()
    print(f"grpo-stack tools {have}")
    if expect is not None and have != expect:
        print(f"grpo-data: installed tools are {have}, this release needs {expect}", file=sys.stderr)
        return 1
    return 0


def _pairs(values: list[str], flag: str) -> dict[str, str]:
    out = {}
    for v in values:
        name, sep, rest = v.partition("=")
        if not sep or not name or not rest:
            raise Usage(f"{flag} {v!r}: expected NAME=VALUE")
        out[name] = rest
    return out


def _load_source(name: str, split: str, args) -> object:
    from ..data import prepare as P
    from ..data.load import load, resolve_revision, snapshot

    adapter = P.adapter_for(name)
    dirs, revs = _pairs(args.source_dir, "--source-dir"), _pairs(args.revision, "--revision")
    revision, mutable = resolve_revision(adapter, revs.get(name), args.allow_mutable)
    commit = None
    if name in dirs:
        root = Path(dirs[name])
        if not root.is_dir():
            raise DataInputError(f"--source-dir {name}={root}: no such directory")
    else:
        if split not in adapter.splits:
            raise DataInputError(f"{name}: no {split!r} split (has: {', '.join(sorted(adapter.splits))})")
        root, commit = snapshot(adapter, split, revision, args.cache_dir, args.endpoint)
    return load(adapter, split, revision, mutable, root, args.cache_dir, commit)


def _check_unknown_pairs(args, names: list[str]) -> None:
    from ..data import prepare as P

    for flag, values in (("--source-dir", args.source_dir), ("--revision", args.revision)):
        for name in _pairs(values, flag):
            P.adapter_for(name)
            if name not in names:
                raise Usage(f"{flag} {name}=...: {name} is not one of the --dataset sources")


def _prepare(args) -> int:
    from ..data import prepare as P
    from ..data.write import check_output, claimed

    if not args.dataset and not args.from_file:
        raise Usage("prepare needs at least one --dataset or --from-file")
    if not (0.0 <= args.min_pass_rate <= args.max_pass_rate <= 1.0):
        raise Usage("--min-pass-rate and --max-pass-rate must satisfy 0 <= min <= max <= 1")
    for out in args.output:
        check_output(out, args.framework)
    with claimed(args.output, [Path(P.parse_weighted(s)[0]) for s in args.from_file]):
        return _prepare_claimed(args)


def _prepare_claimed(args) -> int:
    from ..data import prepare as P
    from ..data.write import write, write_manifest

    specs = [P.parse_weighted(s) for s in args.dataset]
    for name, _ in specs:
        P.adapter_for(name)
    _check_unknown_pairs(args, [n for n, _ in specs])
    rate = P.PassRateFilter(args.pass_rate_column, args.min_pass_rate, args.max_pass_rate)
    progress = not args.no_progress
    parts = []
    for name, weight in specs:
        loaded = _load_source(name, args.split, args)
        parts.append(P.convert(loaded, weight, not args.keep_duplicates, rate, progress))
    for spec in args.from_file:
        path, weight = P.parse_weighted(spec)
        if not Path(path).is_file():
            why = "not a regular file" if Path(path).exists() else "no such file"
            raise DataInputError(f"--from-file {path}: {why}")
        parts.append(P.from_prepared_file(Path(path), weight, not args.keep_duplicates, rate, progress))
    for examples, report in parts:
        if not examples:
            raise DataInputError(f"{report.name} ({report.split}): no usable examples "
                                 f"(read {report.rows_read}, skipped {sum(report.skipped.values())})")
    mixed = P.mix(parts, args.seed)
    outputs = [write(mixed, out) for out in args.output]
    body = {
        "tool": f"grpo-data {tools_version()}", "command": "prepare", "seed": args.seed,
        "dedupe": not args.keep_duplicates, "sources": [r.as_dict() for _, r in parts], "outputs": outputs,
    }
    for out in args.output:
        write_manifest(out, body)
    for o in outputs:
        print(f"wrote {o['rows']} rows to {o['path']} (sha256 {o['sha256'][:12]}…)")
    return 0


def _holdout(args) -> int:
    from ..data.write import check_output, claimed

    if bool(args.val) == bool(args.dataset):
        raise Usage("holdout needs either --dataset (build the split) or --val (audit a file), not both")
    if args.dataset and not args.output:
        raise Usage("holdout --dataset needs --output")
    if args.val and args.output:
        raise Usage("holdout --val audits only; drop --output")
    if not (0.0 <= args.max_overlap <= 100.0):
        raise Usage("--max-overlap is a percentage between 0 and 100")
    for out in args.output:
        check_output(out, args.framework)
    with claimed(args.output, [args.train, *([args.val] if args.val else [])]):
        return _holdout_claimed(args)


def _holdout_claimed(args) -> int:
    from ..data import holdout as H
    from ..data import prepare as P
    from ..data.write import write, write_manifest

    train = H.read_prepared(args.train)
    if not train:
        raise DataInputError(f"{args.train}: empty training file")
    reports = []
    if args.val:
        val = H.read_prepared(args.val)
    else:
        specs = []
        for s in args.dataset:
            name, cap = P.parse_weighted(s)
            if cap != 1.0 and (cap != int(cap)):
                raise Usage(f"--dataset {s}: ROWS must be a whole number")
            specs.append((name, int(cap) if ":" in s else None))
        for name, _ in specs:
            P.adapter_for(name)
        _check_unknown_pairs(args, [n for n, _ in specs])
        val = []
        for name, cap in specs:
            adapter = P.adapter_for(name)
            split = args.split or ("test" if "test" in adapter.splits else "valid")
            loaded = _load_source(name, split, args)
            examples, report = P.convert(loaded, 1.0, True, None, not args.no_progress)
            if cap is not None and cap < len(examples):
                picks = sorted(random.Random(f"{args.seed}:{name}").sample(range(len(examples)), cap))
                examples = [examples[i] for i in picks]
            report.rows_written = len(examples)
            reports.append(report)
            val += examples
    if not val:
        raise DataInputError("the validation split is empty")
    rows, hits = H.audit(train, val)
    print(H.table(rows))
    worst = max(rows[:-1], key=lambda r: r.percent)
    over = [r for r in rows[:-1] if r.percent > args.max_overlap]
    if args.drop_overlap and hits:
        val = [e for i, e in enumerate(val) if i not in hits]
        print(f"dropped {len(hits)} overlapping problem(s); {len(val)} remain")
        if not val:
            raise DataInputError("every validation problem is in the training set")
        over = []
    if over and not args.allow_overlap:
        print(f"grpo-data: overlap above {args.max_overlap:g}% in {', '.join(r.source for r in over)} "
              f"(worst {worst.source} {worst.percent:.1f}%); fix the split, --drop-overlap, or --allow-overlap",
              file=sys.stderr)
        return 1
    outputs = [write(val, out) for out in args.output]
    if outputs:
        body = {
            "tool": f"grpo-data {tools_version()}", "command": "holdout", "seed": args.seed,
            "train": {"path": str(args.train), "sha256": _sha256(args.train)},
            "sources": [r.as_dict() for r in reports],
            "audit": [r.as_dict() for r in rows], "max_overlap_percent": args.max_overlap,
            "allow_overlap": args.allow_overlap, "dropped_overlapping": len(hits) if args.drop_overlap else 0,
            "outputs": outputs,
        }
        for out in args.output:
            write_manifest(out, body)
        for o in outputs:
            print(f"wrote {o['rows']} rows to {o['path']} (sha256 {o['sha256'][:12]}…)")
    return 0


def _sha256(path: Path) -> str:
    from ..digest import sha256_file

    return sha256_file(path)


def _list() -> int:
    from ..data.adapters import REGISTRY

    for a in REGISTRY.values():
        print(f"{a.name:<14} {a.ability:<5} {a.repo:<36} data_source={a.data_source:<36} splits={','.join(a.splits)}")
        print(f"{'':<14} revision {a.revision} files {' '.join(f'{k}={v}' for k, v in a.splits.items())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
