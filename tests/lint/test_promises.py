"""The cross-component promise table in docs/rules.md: every row names registered rules with real fixtures, or
guards with tests that exist, or is an explicit gap (a promise a misconfiguration can break while linting clean)."""

from __future__ import annotations

import ast

import pytest
from grpo_stack.lint.rules import RULES
from grpo_stack.lint.rules.promises import GUARD_KINDS, PROMISES
from grpo_stack.paths import REPO_ROOT

from tests.lint.fixtures import FIXTURES, expected_lines

CHECKS = [(p.promise, c) for p in PROMISES for c in p.checks]
GUARDS = [(p.promise, g) for p in PROMISES for g in p.guards]


@pytest.mark.parametrize("promise, check", CHECKS, ids=[f"{c.code}:{c.bad}" for _, c in CHECKS])
def test_every_row_names_a_registered_rule_and_its_fixtures(promise, check):
    assert check.code in RULES, f"{promise!r}: {check.code} is not a registered rule"
    good, bad = FIXTURES / check.code / check.good, FIXTURES / check.code / check.bad
    assert check.good.startswith("good-") and good.is_file(), f"{promise!r}: no good fixture {good}"
    assert check.bad.startswith("bad-") and bad.is_file(), f"{promise!r}: no bad fixture {bad}"
    assert expected_lines(bad, check.code), f"{bad} marks no `# expect: {check.code}` line"


@pytest.mark.parametrize("promise, guard", GUARDS, ids=[g.test.rsplit("::", 1)[-1] for _, g in GUARDS])
def test_every_guard_names_a_test_that_exists(promise, guard):
    """A row that says a mismatch is impossible by schema or construction, or refused at start, must name the test
    that proves it; a guard whose test was renamed or deleted would be a claim nothing checks."""
    assert guard.kind in GUARD_KINDS, f"{promise!r}: unknown guard kind {guard.kind!r}"
    path, _, name = guard.test.partition("::")
    file = REPO_ROOT / path
    assert path.startswith("tests/") and file.is_file(), f"{promise!r}: no test file {path}"
    defined = {n.name for n in ast.walk(ast.parse(file.read_text())) if isinstance(n, ast.FunctionDef)}
    assert name.startswith("test_") and name in defined, f"{promise!r}: {path} defines no {name}"


def test_rows_are_either_kept_or_gaps():
    for p in PROMISES:
        kept = bool(p.checks or p.guards)
        assert kept != bool(p.gap), f"{p.promise!r}: a row has rules or guards, or a gap; never both or neither"
        assert p.area and p.between


def test_gaps_are_listed_in_the_generated_docs():
    text = (REPO_ROOT / "docs" / "rules.md").read_text()
    gaps = [p for p in PROMISES if not (p.checks or p.guards)]
    assert f"Gaps ({len(gaps)}):" in text
    for p in gaps:
        assert f"**gap**: {p.gap}" in text
    for _, g in GUARDS:
        assert f"`{g.test}`" in text, f"docs/rules.md does not name the guard test {g.test}"
