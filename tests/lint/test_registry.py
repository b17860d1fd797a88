"""Meta-test over the rule registry: every rule is documented, fixtured and uniquely coded."""

from __future__ import annotations

import re

import pytest
from grpo_stack.lint.finding import Severity
from grpo_stack.lint.rules import RULES, doc_section
from grpo_stack.lint.rules.docs import rules_markdown
from grpo_stack.paths import REPO_ROOT

from tests.lint.fixtures import FIXTURES

SECTIONS = ("What it does", "Why is this bad?", "Example", "Fix")


def test_codes_and_names_unique():
    codes = [r.CODE for r in RULES.values()]
    names = [r.NAME for r in RULES.values()]
    assert len(set(codes)) == len(codes) and len(set(names)) == len(names)
    assert all(code == r.CODE for code, r in RULES.items())


@pytest.mark.parametrize("code", list(RULES))
def test_rule_is_complete(code):
    rule = RULES[code]
    assert re.fullmatch(r"GRPO\d{3}", rule.CODE)
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.NAME), rule.NAME
    assert isinstance(rule.SEVERITY, Severity)
    assert rule.SUMMARY.strip()
    for section in SECTIONS:
        assert doc_section(rule, section), f"{code}: DOC lacks a non-empty '## {section}' section"
    assert "Use instead" in doc_section(rule, "Example"), f"{code}: the example needs a 'Use instead' part"
    assert callable(rule.check)


@pytest.mark.parametrize("code", list(RULES))
def test_rule_has_good_and_bad_fixtures(code):
    files = [p.name for p in (FIXTURES / code).glob("*.yaml")]
    assert any(n.startswith("good-") for n in files), f"{code}: no good-*.yaml fixture"
    assert any(n.startswith("bad-") for n in files), f"{code}: no bad-*.yaml fixture"


def test_docs_rules_md_is_generated_from_the_registry():
    """docs/rules.md must not drift from the rules' own docs (regenerate: grpo-lint rules --format markdown)."""
    assert (REPO_ROOT / "docs" / "rules.md").read_text() == rules_markdown()


def test_subchart_names_match_the_typed_model():
    """The lightweight name list the lint path uses must list exactly the modelled subcharts."""
    from grpo_stack.paths import SUBCHART_NAMES
    from grpo_stack.schema.components import SUBCHARTS
    from grpo_stack.values import SECTION_MODELS

    assert tuple(SUBCHARTS) == SUBCHART_NAMES
    assert {n: m.__name__ for n, m in SUBCHARTS.items()} == SECTION_MODELS
