"""docs/data.md's source tables say what grpo-data reads: the same repository, commit and files as the adapter
registry, and a provenance row for every source. Guards against a pin changed in code but not in the docs (or
the reverse), which is how an unverified revision went unnoticed before."""

from __future__ import annotations

import re
from pathlib import Path

from grpo_stack.data.adapters import REGISTRY

DOC = Path(__file__).resolve().parents[2] / "docs" / "data.md"


def _rows(heading: str) -> list[list[str]]:
    text = DOC.read_text()
    section = text[text.index(heading):]
    table = re.search(r"\n(\|.*\|\n)+", section).group(0)
    return [[c.strip() for c in line.strip("|").split("|")] for line in table.strip().splitlines()[2:]]


def test_sources_table_matches_the_registry():
    rows = {r[0].strip("`"): r for r in _rows("### Sources")}
    assert sorted(rows) == sorted(REGISTRY)
    for name, a in REGISTRY.items():
        _, repo, revision, files, data_source, ability = rows[name]
        assert (repo, revision, data_source, ability) == (f"`{a.repo}`", f"`{a.revision}`", f"`{a.data_source}`",
                                                          a.ability), name
        assert re.findall(r"`([^`]+)`", re.sub(r"\(.*?\)", "", files)) == list(a.splits.values()), name


def test_every_source_has_a_provenance_row_with_a_status():
    rows = _rows("### Where each fact comes from")
    assert {r[0].strip("`") for r in rows} == set(REGISTRY)
    for source, _, status, where in rows:
        assert status.startswith(("confirmed", "unconfirmed")), source
        assert where.startswith("https://") or status.startswith("unconfirmed"), source
