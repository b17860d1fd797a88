"""Every alternative a batch rule suggests is itself valid by the same checker: applied to the values key the
finding names, that finding goes away and no new error appears."""

from __future__ import annotations

import re

import pytest

from tests.job.cases import MILES_BASES, VERL_BASES, draw, lint, miles_changes, sheet_id, spec_with, verl_changes

SUGGESTION = re.compile(r"^set (\S+) to (\d+(?: or \d+)*)$")


def spec_path(key_path: str) -> str:
    """A values key path as a job-spec path (the chart renders global.job and global.cluster into job.json)."""
    return key_path.removeprefix("global.")


def errors(hits) -> set[tuple[str, str]]:
    return {(code, sheet_id(h)) for code, h in hits if h.severity.value == "error"}


def check_suggestions(spec) -> int:
    _, hits = lint(spec)
    before = errors(hits)
    checked = 0
    for code, hit in hits:
        m = SUGGESTION.match(hit.remediation or "")
        if not m:
            continue
        for value in (int(v) for v in m.group(2).split(" or ")):
            fixed = spec_with(spec, {spec_path(m.group(1)): value})
            ctx, after = lint(fixed)
            assert ctx.built is not None, ctx.build_error
            same = [h.message for c, h in after if c == code and h.key_path == hit.key_path
                    and sheet_id(h) == sheet_id(hit)]
            assert not same, f"{hit.message} -> {m.group(1)}={value} still: {same}"
            assert errors(after) <= before, f"{m.group(1)}={value} adds {errors(after) - before}"
            checked += 1
    return checked


@pytest.mark.parametrize("framework", ["verl", "miles"])
def test_suggested_values_pass_the_checker(base_specs, framework):
    """The reviewed messages promised a fix without a calculator; the fix must not be another crash."""
    strategy, count = (verl_changes(), 100) if framework == "verl" else (miles_changes(), 100)
    total = 0
    for base, change in draw(strategy, count):
        assert base in VERL_BASES + MILES_BASES
        total += check_suggestions(spec_with(base_specs[base], change))
    assert total > 100, total
