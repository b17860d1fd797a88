"""docs/batch-math.md and docs/models.md are generated; they must not drift from the rules and the catalog."""

from __future__ import annotations

from grpo_stack.lint.rules import doc_section
from grpo_stack.lint.rules.batch import BATCH_MODULES
from grpo_stack.lint.rules.batch._docs import batch_math_markdown, models_markdown
from grpo_stack.paths import REPO_ROOT

REGENERATE = "regenerate with: python -m grpo_stack.lint.rules.batch._docs"


def test_batch_math_md_is_generated():
    assert (REPO_ROOT / "docs" / "batch-math.md").read_text() == batch_math_markdown(), REGENERATE


def test_models_md_is_generated():
    assert (REPO_ROOT / "docs" / "models.md").read_text() == models_markdown(), REGENERATE


def test_batch_rules_are_complete_and_in_code_order():
    codes = [m.CODE for m in BATCH_MODULES]
    assert codes == sorted(codes) and len(set(codes)) == len(codes)
    assert all(c.startswith("GRPO3") for c in codes)
    assert len({m.NAME for m in BATCH_MODULES}) == len(codes)
    for m in BATCH_MODULES:
        for section in ("What it does", "Why is this bad?", "Example", "Fix"):
            assert doc_section(m, section), (m.CODE, section)
        assert "Use instead" in doc_section(m, "Example"), m.CODE
        assert m.SHEET_IDS and m.SUMMARY


def test_every_sheet_id_has_one_rule():
    ids = [i for m in BATCH_MODULES for i in m.SHEET_IDS]
    assert len(ids) == len(set(ids))
