"""A literal credential in global.job.extraEnv is reported once, at the user's values line, with the fix for that
variable (issue: a pasted AWS_SECRET_ACCESS_KEY was reported twice at the chart's template lines with the HF-token
fix). The fix, applied to the values, is accepted and clears the finding."""

from __future__ import annotations

from grpo_stack.lint.engine import lint_values
from grpo_stack.paths import REPO_ROOT

BASE = str(REPO_ROOT / "values" / "qwen3-8b.yaml")
SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


def _lint(*paths):
    return lint_values([BASE, *map(str, paths)], release="grpo", namespace="grpo")


def test_pasted_aws_secret_is_reported_once_at_the_values_line_with_its_own_fix(tmp_path):
    values = tmp_path / "aws.yaml"
    values.write_text("global:\n  job:\n    extraEnv:\n      - name: MLFLOW_TRACKING_URI\n        value: http://mlflow:5000\n"
                      f"      - name: AWS_SECRET_ACCESS_KEY\n        value: {SECRET}\n")
    result = _lint(values)
    assert not result.input_errors, [str(e) for e in result.input_errors]
    found = [f for f in result.findings if f.code == "GRPO201"]
    assert len(found) == 1, [(f.file, f.line, f.message) for f in found]
    [finding] = found
    assert (finding.file, finding.line, finding.key_path) == (str(values), 7, "global.job.extraEnv.1.value")
    assert "AWS_SECRET_ACCESS_KEY" in finding.message and SECRET not in finding.message
    assert "AWS_SECRET_ACCESS_KEY" in finding.remediation and "hf-token" not in finding.remediation.lower()

    # The fix as the remediation spells it: the Secret it names, referenced from the same entry.
    secret = finding.remediation.split("secretKeyRef: {name: ", 1)[1].split(",", 1)[0]
    values.write_text("global:\n  job:\n    extraEnv:\n      - name: MLFLOW_TRACKING_URI\n        value: http://mlflow:5000\n"
                      "      - name: AWS_SECRET_ACCESS_KEY\n        valueFrom:\n          secretKeyRef:\n"
                      f"            name: {secret}\n            key: AWS_SECRET_ACCESS_KEY\n")
    result = _lint(values)
    assert not result.input_errors, [str(e) for e in result.input_errors]
    assert not [f for f in result.findings if f.code == "GRPO201"]
