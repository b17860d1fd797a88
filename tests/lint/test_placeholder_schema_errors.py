"""An envsubst or sed template linted before it was rendered: a placeholder where the schema wants a number or a
quantity is named as an unrendered placeholder (with the fix: render, then lint), not only as a type error."""

from __future__ import annotations

import json

import pytest
from grpo_stack.cli.lint import main

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {{name: scorer, namespace: team}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: scorer}}}}
  template:
    metadata: {{labels: {{app: scorer}}}}
    spec:
      containers:
        - name: scorer
          image: "python:3.11.15"
"""


@pytest.mark.parametrize("placeholder", ["${REPLICAS}", "$REPLICAS", "PLACEHOLDER_NUM_REPLICAS", "<replica-count>",
                                         "'{{ .Values.replicas }}'"])
def test_placeholder_is_named_as_unrendered(placeholder, tmp_path, capsys):
    path = tmp_path / "template.yaml"
    path.write_text(DEPLOYMENT.format(replicas=placeholder))
    assert main(["--no-cache", "--format", "json", str(path)]) == 1
    findings = json.loads(capsys.readouterr().out)["findings"]
    messages = [f["message"] for f in findings if f["code"] == "GRPO002"]
    assert messages and "is an unrendered template placeholder where the schema wants integer" in messages[0]
    assert "render the template" in messages[0]


def test_other_wrong_values_keep_the_type_message(tmp_path, capsys):
    path = tmp_path / "typo.yaml"
    path.write_text(DEPLOYMENT.format(replicas="two"))
    assert main(["--no-cache", "--format", "json", str(path)]) == 1
    findings = json.loads(capsys.readouterr().out)["findings"]
    messages = [f["message"] for f in findings if f["code"] == "GRPO002"]
    assert messages and "is not of type 'integer'" in messages[0] and "placeholder" not in messages[0]
