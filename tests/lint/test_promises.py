"""The cross-component promise table in docs/rules.md: every row names registered rules with real fixtures, or
is an explicit gap (a promise a misconfiguration can break while linting clean)."""

from __future__ import annotations

import pytest
from grpo_stack.lint.rules import RULES
from grpo_stack.lint.rules.promises import PROMISES
from grpo_stack.paths import REPO_ROOT

from tests.lint.fixtures import FIXTURES, expected_lines

CHECKS = [(p.promise, c) for p in PROMISES for c in p.checks]


@pytest.mark.parametrize("promise, check", CHECKS, ids=[f"{c.code}:{c.bad}" for _, c in CHECKS])
def test_every_row_names_a_registered_rule_and_its_fixtures(promise, check):
    assert check.code in RULES, f"{promise!r}: {check.code} is not a registered rule"
    good, bad = FIXTURES / check.code / check.good, FIXTURES / check.code / check.bad
    assert check.good.startswith("good-") and good.is_file(), f"{promise!r}: no good fixture {good}"
    assert check.bad.startswith("bad-") and bad.is_file(), f"{promise!r}: no bad fixture {bad}"
    assert expected_lines(bad, check.code), f"{bad} marks no `# expect: {check.code}` line"


def test_rows_are_either_checked_or_gaps():
    for p in PROMISES:
        assert bool(p.checks) != bool(p.gap), f"{p.promise!r}: a row has rules or a gap, never both or neither"
        assert p.area and p.between


def test_gaps_are_listed_in_the_generated_docs():
    text = (REPO_ROOT / "docs" / "rules.md").read_text()
    gaps = [p for p in PROMISES if not p.checks]
    assert f"Gaps ({len(gaps)}):" in text
    for p in gaps:
        assert f"**gap**: {p.gap}" in text
