"""The published memory rows (tests/memory/published/rows.json): every row cited, its outcome one the validation
can score, and the split fixed: the aside third is the committed one, unedited, and the reference rows' scripts
stay in the fitting set. Nothing here scores a row: scoring the fitting set is the model's work, the aside set is
scored once at the end of it (docs/memory.md, "Published configurations"); test_published_score.py scores the fitting
set."""

from __future__ import annotations

from collections import Counter

from tests.memory.published import split

OUTCOMES = {"fits", "oom", "measured"}


def test_every_row_is_cited_and_scorable():
    rows = split.rows()
    assert len(rows) >= 30
    assert len({r["id"] for r in rows}) == len(rows)
    for row in rows:
        assert row["source_repo"] and (row["source_path"] or row["source_url"]), row["id"]
        assert row.get("quote"), row["id"]
        if row["corpus"] != "measured-peaks":
            assert row["outcome"] in OUTCOMES, row["id"]


def test_the_aside_third_is_the_committed_one():
    """An edit of an aside row, or a change of the seed or the rule, changes this digest."""
    assert split.aside_digest() == split.ASIDE_SHA256


def test_the_split_sets_a_third_aside_and_keeps_the_reference_scripts_for_fitting():
    rows = split.rows()
    aside = [r for r in rows if split.is_aside(r)]
    assert 0.2 <= len(aside) / len(rows) <= 0.4
    assert not [r["id"] for r in aside if r["in_reference"]]
    outcomes = Counter(r["outcome"] for r in aside if r["corpus"] != "measured-peaks")
    assert outcomes["fits"] and outcomes["oom"], outcomes
