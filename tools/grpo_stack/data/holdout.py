"""holdout: the validation split and its contamination audit.

Every validation example's problem is normalised (NFKC, case-folded, whitespace collapsed) and hashed; the audit
counts, per validation source, the examples whose hash also occurs anywhere in the training file. A validation
set that shares problems with training measures memorisation, not learning (the predecessor found 74.8 % of its
code validation set in training, 93.3 % for APPS, only by hand).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

from .errors import DataInputError
from .example import Example, from_verl_row, problem_hash


@dataclass(frozen=True)
class AuditRow:
    source: str
    rows: int
    overlapping: int

    @property
    def percent(self) -> float:
        return 100.0 * self.overlapping / self.rows if self.rows else 0.0

    def as_dict(self) -> dict:
        return {"source": self.source, "rows": self.rows, "overlapping": self.overlapping,
                "percent": round(self.percent, 2)}


def read_prepared(path: Path) -> list[Example]:
    """A prepared file in either layout (.parquet verl, .jsonl miles)."""
    if not path.exists():
        raise DataInputError(f"{path}: no such file")
    if not path.is_file():  # a FIFO or device would block the read
        raise DataInputError(f"{path}: not a regular file")
    try:
        if path.suffix == ".jsonl":
            with open(path, encoding="utf-8") as f:
                return [_from_miles_line(line, path, i) for i, line in enumerate(f, 1) if line.strip()]
        rows = pq.read_table(path).to_pylist()
    except (OSError, UnicodeDecodeError) as exc:
        raise DataInputError(f"{path}: cannot read ({exc})") from None
    except Exception as exc:  # pyarrow's parquet errors are ArrowInvalid and friends
        raise DataInputError(f"{path}: not a parquet file ({exc})") from None
    out = []
    for i, row in enumerate(rows):
        try:
            out.append(from_verl_row(row, origin=path.stem))
        except ValueError as exc:
            raise DataInputError(f"{path}: row {i}: {exc}") from None
    return out


def _from_miles_line(line: str, path: Path, lineno: int) -> Example:
    try:
        obj = json.loads(line)
        meta = obj.get("metadata") or {}
        prompt = obj["prompt"]
        if not isinstance(prompt, str | list):
            raise TypeError(f"prompt must be a string or a list of messages, got {type(prompt).__name__}")
        text = "\n".join(m["content"] for m in prompt if m.get("role") == "user") if isinstance(prompt, list) \
            else prompt
        return Example(
            data_source=str(meta.get("data_source", "")), ability=str(meta.get("ability", "")),
            problem=str(meta.get("problem") or text), prompt=text, ground_truth=str(obj["label"]),
            source=str(meta.get("source") or path.stem), source_id=str(meta.get("source_id", lineno)),
            split=str(meta.get("split", "")),
            pass_rate=None if meta.get("pass_rate") is None else float(meta["pass_rate"]),
            metadata=meta.get("extra") or {},
        )
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        raise DataInputError(f"{path}:{lineno}: not a miles-layout line ({type(exc).__name__}: {exc})") from None


def audit(train: list[Example], val: list[Example]) -> tuple[list[AuditRow], set[int]]:
    """Per validation source: rows and rows whose problem is in training. Also the overlapping indices of `val`."""
    seen = {problem_hash(e.problem) for e in train}
    per: OrderedDict[str, list[int]] = OrderedDict()
    hits: set[int] = set()
    for i, e in enumerate(val):
        counts = per.setdefault(e.source, [0, 0])
        counts[0] += 1
        if problem_hash(e.problem) in seen:
            counts[1] += 1
            hits.add(i)
    rows = [AuditRow(s, n, k) for s, (n, k) in sorted(per.items())]
    total = AuditRow("all", sum(r.rows for r in rows), sum(r.overlapping for r in rows))
    return [*rows, total], hits


def table(rows: list[AuditRow]) -> str:
    width = max(len("source"), *(len(r.source) for r in rows))
    lines = [f"{'source':<{width}}  {'val rows':>8}  {'in train':>8}  {'overlap':>8}"]
    for r in rows:
        lines.append(f"{r.source:<{width}}  {r.rows:>8}  {r.overlapping:>8}  {r.percent:>7.1f}%")
    return "\n".join(lines)
