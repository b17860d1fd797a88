"""Every GRPO3xx rule against its good and bad fixtures, by code and line (the same contract as
tests/lint/rules/test_fixtures.py, with the batch rules registered)."""

from __future__ import annotations

import pytest
from grpo_stack.lint.rules.batch import BATCH_MODULES

from tests.lint.fixtures import FIXTURES, expected_lines, lint_fixture

BATCH_FIXTURES = sorted(p for m in BATCH_MODULES for p in (FIXTURES / m.CODE).glob("*.yaml"))


def test_every_batch_rule_has_good_and_bad_fixtures():
    for m in BATCH_MODULES:
        names = [p.name for p in (FIXTURES / m.CODE).glob("*.yaml")]
        assert any(n.startswith("good-") for n in names), m.CODE
        assert any(n.startswith("bad-") for n in names), m.CODE


@pytest.mark.parametrize("path", BATCH_FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_batch_fixture(path):
    code = path.parent.name
    result = lint_fixture(path)
    assert not result.input_errors, [str(e) for e in result.input_errors]
    mine = [f"{f.line}: {f.message}" for f in result.findings if f.code == code]
    if path.name.startswith("good-"):
        assert not mine, mine
        # A good fixture is clean for every batch rule, not only its own.
        errors = [f"{f.code} {f.message}" for f in result.findings if f.code.startswith("GRPO3")
                  and f.severity.value == "error"]
        assert not errors, errors
    else:
        got = {f.line for f in result.findings if f.code == code and f.file == str(path)}
        assert got == expected_lines(path, code), mine
