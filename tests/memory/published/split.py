"""The split of the published memory rows, fixed for each batch before the memory model is fitted to any of its rows.

Rows come in batches (rows.json, gathered 2026-12-03; rows-2026-12-07.json, rows-2026-12-07b.json,
rows-2026-12-07c.json and rows-2026-12-07d.json, gathered later from sources no earlier batch cites), each with its
own seed. A batch's seed is the first of `<name>`, `<name>/1`, `<name>/2`, ... whose aside third holds every outcome
the batch has three of and 20-40 % of its rows (the test's rule): the seed is fixed by the rows and their outcomes
alone, before any row is scored. A row is set aside when the seeded hash of its id falls in the first third; a row
drawn from the same script as a reference row (in_reference) is always in the fitting set. A batch's aside rows are
scored once, when the work on the model fitted to its other rows is done, and reported; the model is never refitted
to them. Each batch's aside digest is the hash of its aside rows as committed, so an edit of one is seen
(tests/memory/test_published_rows.py).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent


@dataclass(frozen=True)
class Batch:
    file: str
    seed: str
    aside_sha256: str

    def rows(self) -> list[dict[str, Any]]:
        return json.loads((HERE / self.file).read_text(encoding="utf-8"))["rows"]

    def is_aside(self, row: dict[str, Any]) -> bool:
        if row.get("in_reference"):
            return False
        digest = hashlib.sha256(f"{self.seed}:{row['id']}".encode()).hexdigest()
        return int(digest[:16], 16) % 3 == 0

    def aside_digest(self) -> str:
        """sha256 of the batch's aside rows, canonical JSON sorted by id."""
        aside = sorted((r for r in self.rows() if self.is_aside(r)), key=lambda r: r["id"])
        return hashlib.sha256(json.dumps(aside, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


BATCHES = (
    Batch("rows.json", "grpo-stack/memory/published/2026-12-03",
          "4a5861dad68471e836bb56f5e2c163a993273d8d8911c80b6106749a89b9a712"),
    Batch("rows-2026-12-07.json", "grpo-stack/memory/published/2026-12-07",
          "bb41dc57639496a1d8a02e474c01767dee3199f7a41424ed77ba3ecd3a86057b"),
    # The plain seed put none of the five OOM rows aside.
    Batch("rows-2026-12-07b.json", "grpo-stack/memory/published/2026-12-07b/1",
          "6a258be3b4f3a410d242f4b22443fe71810cfff181afe981ff0164720498ebb8"),
    # The plain seed set 10 of 22 rows aside, over the test's 40 %.
    Batch("rows-2026-12-07c.json", "grpo-stack/memory/published/2026-12-07c/1",
          "d23e893343ef91da32fa7f0e381bc18ebb1d96d2b3e611497f019289d6123e15"),
    Batch("rows-2026-12-07d.json", "grpo-stack/memory/published/2026-12-07d",
          "6e417e39aa1060be91a3e23c4f29a461a5ad9d18edcab56553414de6222561b5"),
)


@cache
def _batch_of() -> dict[str, Batch]:
    return {row["id"]: batch for batch in BATCHES for row in batch.rows()}


def rows(batch: str | None = None) -> list[dict[str, Any]]:
    """Every batch's rows, or one batch's (its file name)."""
    return [row for b in BATCHES if batch in (None, b.file) for row in b.rows()]


def is_aside(row: dict[str, Any]) -> bool:
    return _batch_of()[row["id"]].is_aside(row)


def fitting(batch: str | None = None) -> list[dict[str, Any]]:
    return [r for r in rows(batch) if not is_aside(r)]


def aside(batch: str | None = None) -> list[dict[str, Any]]:
    return [r for r in rows(batch) if is_aside(r)]
