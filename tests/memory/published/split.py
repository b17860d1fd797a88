"""The split of the published memory rows (rows.json), fixed before the memory model is fitted to any of them.

A row is set aside when the seeded hash of its id falls in the first third; a row drawn from the same script as a
reference row (in_reference) is always in the fitting set. The aside rows are scored once, when the work on the
model is done, and reported; the model is never refitted to them. ASIDE_SHA256 is the hash of the aside rows as
committed, so an edit of one is seen (tests/memory/test_published_rows.py).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

ROWS = Path(__file__).with_name("rows.json")
SEED = "grpo-stack/memory/published/2026-12-03"
ASIDE_SHA256 = "4a5861dad68471e836bb56f5e2c163a993273d8d8911c80b6106749a89b9a712"


def rows() -> list[dict[str, Any]]:
    return json.loads(ROWS.read_text(encoding="utf-8"))["rows"]


def is_aside(row: dict[str, Any]) -> bool:
    if row.get("in_reference"):
        return False
    digest = hashlib.sha256(f"{SEED}:{row['id']}".encode()).hexdigest()
    return int(digest[:16], 16) % 3 == 0


def fitting() -> list[dict[str, Any]]:
    return [r for r in rows() if not is_aside(r)]


def aside_digest() -> str:
    """sha256 of the aside rows, canonical JSON sorted by id."""
    aside = sorted((r for r in rows() if is_aside(r)), key=lambda r: r["id"])
    return hashlib.sha256(json.dumps(aside, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
