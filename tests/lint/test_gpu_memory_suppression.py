"""A false GRPO920 may be suppressed only with the measured peak in the reason."""

from __future__ import annotations

from grpo_stack.lint.engine import lint_values
from grpo_stack.paths import REPO_ROOT

BASE = str(REPO_ROOT / "values" / "qwen25-72b.yaml")
OOM = """global:
  cluster:
    gpuInstanceType: p5en.48xlarge
    nodes: 2
    efaPerNode: 16
  job:
    rollout:
      gpuMemoryUtilization: 0.55  # grpo-lint: disable=GRPO920 {reason}
"""


def _codes(tmp_path, reason):
    f = tmp_path / "run.yaml"
    f.write_text(OOM.format(reason=reason))
    return [x.code for x in lint_values([BASE, str(f)], release="grpo", namespace="grpo").findings]


def test_a_reason_without_the_measured_peak_does_not_suppress(tmp_path):
    codes = _codes(tmp_path, "it worked for us")
    assert "GRPO920" in codes and "GRPO000" in codes


def test_a_reason_with_the_measured_peak_suppresses(tmp_path):
    codes = _codes(tmp_path, "measured peak 131.5 GiB on p5en, run 2026-11-02")
    assert "GRPO920" not in codes and "GRPO000" not in codes
