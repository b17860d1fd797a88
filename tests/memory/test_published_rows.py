"""The published memory rows (tests/memory/published/rows*.json, in batches): every row cited, its outcome one the
validation can score, and the split fixed: the aside third is the committed one, unedited, and the reference rows'
scripts stay in the fitting set. Nothing here scores a row: scoring the fitting set is the model's work, the aside
set is scored once at the end of it (docs/memory.md, "Published configurations"); test_published_score.py scores the
fitting set."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.memory.published import split

OUTCOMES = {"fits", "oom", "measured"}


def test_every_row_is_cited_and_scorable():
    """At least 30 rows in all (the validation's size), and at least 20 in each batch, so that its aside third
    holds enough rows to score."""
    rows = split.rows()
    assert len(rows) >= 30 and all(len(batch.rows()) >= 20 for batch in split.BATCHES)
    assert len({r["id"] for r in rows}) == len(rows)
    for row in rows:
        assert row["source_repo"] and (row["source_path"] or row["source_url"]), row["id"]
        assert row.get("quote"), row["id"]
        if row["corpus"] != "measured-peaks":
            assert row["outcome"] in OUTCOMES, row["id"]


@pytest.mark.parametrize("batch", split.BATCHES, ids=lambda b: b.file)
def test_the_aside_third_is_the_committed_one(batch):
    """An edit of an aside row, or a change of the seed or the rule, changes this digest."""
    assert batch.aside_digest() == batch.aside_sha256


@pytest.mark.parametrize("batch", split.BATCHES, ids=lambda b: b.file)
def test_the_split_sets_a_third_aside_and_keeps_the_reference_scripts_for_fitting(batch):
    rows = batch.rows()
    aside = [r for r in rows if batch.is_aside(r)]
    assert 0.2 <= len(aside) / len(rows) <= 0.4
    assert not [r["id"] for r in aside if r["in_reference"]]
    outcomes = Counter(r["outcome"] for r in rows if r["corpus"] != "measured-peaks")
    aside_outcomes = Counter(r["outcome"] for r in aside if r["corpus"] != "measured-peaks")
    assert all(aside_outcomes[o] for o, n in outcomes.items() if n >= 3), (outcomes, aside_outcomes)
