"""The evaluation overlay given before the run's values file (`-f values/eval/eval.yaml -f values/<run>.yaml`):
the run's file switches the evaluation server off again and the RayCluster stays off. NOTES used to include a
template of the disabled vllm subchart and crash, in grpo-lint and in Helm alike; now it renders and says the
order is wrong. Checked with the chart's own render (Helm's engine, as grpo-render) and with the real Helm CLI.
"""

from __future__ import annotations

import subprocess

import pytest
from grpo_stack.lint.engine import lint_values
from grpo_stack.render import render
from grpo_stack.values import load_values_file, merge_user_values

from tests.conftest import REPO_ROOT, VALUES_FILES

EVAL = REPO_ROOT / "values" / "eval" / "eval.yaml"
CHART = REPO_ROOT / "charts" / "grpo-stack"


@pytest.mark.parametrize("values", VALUES_FILES, ids=lambda p: p.stem)
def test_overlay_first_lints_without_a_crash(values):
    result = lint_values([str(EVAL), str(values)], release="grpo", namespace="grpo")
    assert not result.input_errors, [str(e) for e in result.input_errors]


def test_overlay_first_notes_name_the_right_order():
    data = merge_user_values([load_values_file(EVAL), load_values_file(VALUES_FILES[0])])
    notes = render(data, release="grpo", namespace="grpo").notes
    assert "Neither the training RayCluster nor the vLLM evaluation server is enabled" in notes
    assert "values/eval/eval.yaml" in notes


def test_overlay_first_with_the_real_helm(helm_bin, helm_env):
    proc = subprocess.run([str(helm_bin), "template", "grpo", str(CHART), "-n", "grpo", "-f", str(EVAL), "-f",
                           str(VALUES_FILES[0])], capture_output=True, text=True, env=helm_env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    install = subprocess.run([str(helm_bin), "install", "grpo", str(CHART), "-n", "grpo", "--dry-run=client",
                              "-f", str(EVAL), "-f", str(VALUES_FILES[0])], capture_output=True, text=True,
                             env=helm_env, timeout=300)
    assert install.returncode == 0, install.stderr[-2000:]
    assert "Neither the training RayCluster" in install.stdout
