"""Every rule against its own good and bad fixtures, asserted by code and line."""

from __future__ import annotations

import pytest
from grpo_stack.lint.rules import RULES

from tests.lint.fixtures import all_fixtures, expected_lines, lint_fixture


@pytest.mark.parametrize("path", all_fixtures(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fixture(path):
    code = path.parent.name
    assert code in RULES, f"fixture directory {code} names no registered rule"
    result = lint_fixture(path)
    assert not result.input_errors, [str(e) for e in result.input_errors]
    got = {f.line for f in result.findings if f.code == code and f.file == str(path)}
    mine = [f"{f.line}: {f.message}" for f in result.findings if f.code == code]
    if path.name.startswith("good-"):
        assert not [f for f in result.findings if f.code == code], mine
    else:
        want = expected_lines(path, code)
        assert want, f"{path.name}: a bad fixture must mark at least one `# expect: {code}` line"
        assert got == want, f"expected {code} on lines {sorted(want)}, got {sorted(got)}: {mine}"
