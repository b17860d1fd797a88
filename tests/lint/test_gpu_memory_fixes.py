"""GRPO920's fixes are changes the model predicts fit: applied to the values, the error is gone."""

from __future__ import annotations

from grpo_stack.lint.engine import lint_values
from grpo_stack.paths import REPO_ROOT

BASE = str(REPO_ROOT / "values" / "qwen25-72b.yaml")
BAD = str(REPO_ROOT / "tests" / "lint" / "rules" / "fixtures" / "GRPO920" / "bad-72b-full-finetune-2-p5en.yaml")


def _memory(paths):
    return [f for f in lint_values(paths, release="grpo", namespace="grpo").findings if f.code == "GRPO920"]


def test_the_72b_full_fine_tune_on_2_p5en_names_the_phase_and_a_fix_that_fits(tmp_path):
    [finding] = _memory([BASE, BAD])
    assert finding.severity.value == "error"
    assert "rollout phase" in finding.message and "141.0 GiB" in finding.message
    assert "job.offload params+optimizer on" in finding.message
    fix = tmp_path / "fix.yaml"
    fix.write_text("global:\n  job:\n    offload: {params: true, optimizer: true}\n")
    assert not [f for f in _memory([BASE, BAD, str(fix)]) if f.severity.value == "error"]
