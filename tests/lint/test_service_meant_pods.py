"""GRPO401 on a Service whose selector matches no pod tells the user which pods of the files it was written for (a
near label value on pods that declare the port it targets) and to select their labels; without such pods it says
only that nothing matches."""

from __future__ import annotations

import textwrap

from grpo_stack.lint.release import lint_manifests

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: reranker}
spec:
  selector: {matchLabels: {app: reranker}}
  template:
    metadata: {labels: {app: reranker}}
    spec:
      containers:
        - {name: server, image: registry.example.com/reranker:2.0.3, ports: [{containerPort: 8000}]}
---
apiVersion: v1
kind: Service
metadata: {name: front}
spec:
  selector: {app: SELECTED}
  ports: [{port: 80, targetPort: TARGET}]
"""


def _selector_finding(tmp_path, selected: str, target: int):
    path = tmp_path / "set.yaml"
    path.write_text(textwrap.dedent(DEPLOYMENT.replace("SELECTED", selected).replace("TARGET", str(target))))
    found = [f for f in lint_manifests(str(path)).findings if f.code == "GRPO401"]
    assert len(found) == 1, found
    return found[0]


def test_names_the_pods_with_a_near_label_and_the_port(tmp_path):
    f = _selector_finding(tmp_path, "reranker-gpu", 8000)
    assert "Deployment reranker" in f.message and "{'app': 'reranker'}" in f.message
    assert "select the labels the pods carry" in (f.remediation or "")


def test_says_only_that_nothing_matches_when_no_pod_is_near(tmp_path):
    for selected, target in (("indexer", 8000), ("reranker-gpu", 9000)):
        f = _selector_finding(tmp_path, selected, target)
        assert "matches no pod" in f.message and "Deployment reranker" not in f.message
