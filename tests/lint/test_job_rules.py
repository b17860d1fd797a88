"""The job rules (lint.rules.JOB_RULES) find from the job spec alone what the whole lint finds.

The in-pod submit runs them over the mounted job.json (grpo_stack.jobgate), with no values files, merged values or
rendered objects: a rule listed there that read any of those would pass in the pod what grpo-lint refuses. Checked
over every values fixture of every job rule, good and bad (and so over the whole failure class the fixtures
stand for, not one file).
"""

from __future__ import annotations

import pytest
from grpo_stack import jobgate
from grpo_stack.lint.rules import JOB_RULES, RULES
from grpo_stack.lint.rules.batch import BATCH_MODULES
from grpo_stack.render import job_spec

from tests.lint.fixtures import all_fixtures, lint_fixture, looks_like_manifests

FIXTURES = [p for p in all_fixtures() if p.parent.name in JOB_RULES and not looks_like_manifests(str(p))]


def comparable(findings) -> set[tuple]:
    return {(f.code, f.severity, f.key_path, f.message, f.remediation) for f in findings if f.code in JOB_RULES}


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_job_spec_alone_gives_the_lints_job_findings(path):
    result = lint_fixture(path)
    assert not result.input_errors, [str(e) for e in result.input_errors]
    gate = jobgate.check(job_spec(result.context.rendered), "job.json")
    assert comparable(gate.findings) == comparable(result.findings)
    if path.name.startswith("bad-"):
        assert any(f.code == path.parent.name for f in gate.findings), "the gate missed the fixture's own rule"


def test_job_rules_are_registry_rules_and_cover_the_batch_math():
    assert set(JOB_RULES) <= set(RULES)
    assert {m.CODE for m in BATCH_MODULES} <= set(JOB_RULES)
    assert "GRPO350" in JOB_RULES  # the builder's own refusals
    assert list(JOB_RULES) == [c for c in RULES if c in JOB_RULES], "the gate runs them in the registry's order"
