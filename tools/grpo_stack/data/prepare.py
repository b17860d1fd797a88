"""prepare: sources -> examples -> de-duplicated, difficulty-filtered, weighted mix -> verl parquet / miles JSONL.

Mixing is deterministic: a weight W on a source of n examples contributes floor(W) full copies plus
round(frac(W) * n) examples drawn without replacement by random.Random(f"{seed}:{source}"); the concatenation
is then shuffled by random.Random(seed). Same sources, weights and seed: the same file, byte for byte.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from tqdm import tqdm

from .adapters import REGISTRY, Skip
from .errors import DataInputError
from .example import Example, from_verl_row, problem_hash
from .load import Loaded


@dataclass
class SourceReport:
    name: str
    repo: str | None
    revision: str | None
    mutable: bool
    commit: str | None
    split: str
    weight: float
    files: list[dict[str, Any]]
    rows_read: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    duplicates: int = 0
    pass_rate: dict[str, Any] = field(default_factory=dict)
    examples: int = 0
    rows_written: int = 0

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class PassRateFilter:
    column: str
    minimum: float
    maximum: float

    def active(self) -> bool:
        return self.minimum > 0.0 or self.maximum < 1.0


def convert(loaded: Loaded, weight: float, dedupe: bool, pass_filter: PassRateFilter | None,
            progress: bool) -> tuple[list[Example], SourceReport]:
    a = loaded.adapter
    report = SourceReport(a.name, a.repo, loaded.revision, loaded.mutable, loaded.commit, loaded.split, weight,
                          loaded.files,
                          rows_read=len(loaded.rows))
    has_rate = pass_filter is not None and bool(loaded.rows) and pass_filter.column in loaded.rows[0]
    out: list[Example] = []
    for row in tqdm(loaded.rows, desc=f"{a.name}/{loaded.split}", unit="row", disable=not progress):
        try:
            ex = a.example(row, loaded.split)
        except Skip as why:
            report.skipped[str(why)] = report.skipped.get(str(why), 0) + 1
            continue
        if has_rate:
            rate = row.get(pass_filter.column)
            ex = _with_rate(ex, None if rate is None else float(rate))
        out.append(ex)
    return _finish(out, report, dedupe, pass_filter, has_rate)


def from_prepared_file(path: Path, weight: float, dedupe: bool, pass_filter: PassRateFilter | None,
                       progress: bool) -> tuple[list[Example], SourceReport]:
    """An already prepared verl-layout parquet file (several training files become one prepared file)."""
    from ..digest import sha256_file

    try:
        rows = pq.read_table(path).to_pylist()
    except (OSError, ValueError) as exc:
        raise DataInputError(f"{path}: not a readable parquet file ({exc})") from None
    report = SourceReport(str(path), None, None, False, None, "file", weight,
                          [{"path": str(path), "size": path.stat().st_size, "sha256": sha256_file(path)}],
                          rows_read=len(rows))
    out = []
    for i, row in enumerate(tqdm(rows, desc=path.name, unit="row", disable=not progress)):
        try:
            out.append(from_verl_row(row, origin=path.stem))
        except ValueError as exc:
            raise DataInputError(f"{path}: row {i}: {exc}") from None
    has_rate = pass_filter is not None and any(e.pass_rate is not None for e in out)
    return _finish(out, report, dedupe, pass_filter, has_rate)


def _with_rate(ex: Example, rate: float | None) -> Example:
    from dataclasses import replace

    return replace(ex, pass_rate=rate)


def _finish(examples: list[Example], report: SourceReport, dedupe: bool, pass_filter: PassRateFilter | None,
            has_rate: bool) -> tuple[list[Example], SourceReport]:
    if dedupe:
        seen: set[str] = set()
        unique = []
        for ex in examples:
            h = problem_hash(ex.problem)
            if h not in seen:
                seen.add(h)
                unique.append(ex)
        report.duplicates = len(examples) - len(unique)
        examples = unique
    if pass_filter is not None and pass_filter.active():
        if not has_rate:
            report.pass_rate = {"column": pass_filter.column, "present": False, "filtered": 0}
        else:
            lo, hi = pass_filter.minimum, pass_filter.maximum
            kept = [e for e in examples if e.pass_rate is None or lo <= e.pass_rate <= hi]
            report.pass_rate = {
                "column": pass_filter.column, "present": True, "min": pass_filter.minimum,
                "max": pass_filter.maximum, "filtered": len(examples) - len(kept),
                "unrated_kept": sum(1 for e in kept if e.pass_rate is None),
            }
            examples = kept
    report.examples = len(examples)
    return examples, report


def mix(parts: list[tuple[list[Example], SourceReport]], seed: int) -> list[Example]:
    mixed: list[Example] = []
    for examples, report in parts:
        whole, frac = int(math.floor(report.weight)), report.weight - math.floor(report.weight)
        chosen = examples * whole
        extra = round(frac * len(examples))
        if extra:
            rng = random.Random(f"{seed}:{report.name}")
            picks = sorted(rng.sample(range(len(examples)), extra))
            chosen += [examples[i] for i in picks]
        report.rows_written = len(chosen)
        mixed += chosen
    random.Random(seed).shuffle(mixed)
    return mixed


def parse_weighted(spec: str) -> tuple[str, float]:
    """`NAME` or `NAME:WEIGHT` (also for file paths); weight > 0."""
    name, sep, weight = spec.rpartition(":")
    if not sep or not _is_number(weight):
        return spec, 1.0
    value = float(weight)
    if not math.isfinite(value) or value <= 0:
        raise DataInputError(f"{spec}: weight must be a finite number > 0")
    return name, value


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def adapter_for(name: str):
    if name not in REGISTRY:
        raise DataInputError(f"unknown dataset {name!r} (known: {', '.join(sorted(REGISTRY))})")
    return REGISTRY[name]
