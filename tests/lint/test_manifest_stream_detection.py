"""A stream of several YAML documents is never a values file (Helm reads one mapping): when any of them is a
Kubernetes object, grpo-lint reads the stream as manifests, so a first object whose `apiVersion` key is mistyped is
reported where it is (GRPO002) and the other objects are still linted, instead of the whole file being refused as
a values file of several documents. One mapping without apiVersion and kind stays a values file."""

from __future__ import annotations

import textwrap

from grpo_stack.cli.lint import main

STREAM = """\
piVersion: apps/v1
kind: Deployment
metadata: {name: detector}
spec:
  selector: {matchLabels: {app: detector}}
  template:
    metadata: {labels: {app: detector}}
    spec:
      containers: [{name: server, image: registry.example.com/detector:latest}]
---
apiVersion: v1
kind: Service
metadata: {name: detector}
spec:
  type: NodePort
  selector: {app: detector}
  ports: [{port: 8000}]
"""


def test_mistyped_first_object_is_a_finding_and_the_rest_is_linted(tmp_path, capsys):
    path = tmp_path / "set.yaml"
    path.write_text(textwrap.dedent(STREAM))
    rc = main(["--no-cache", "--format", "text", str(path)])
    out = capsys.readouterr().out
    assert rc == 1
    assert "set.yaml:1:1: GRPO002" in out and "'apiVersion' is a required property" in out
    assert "GRPO701" in out  # the Deployment's image is still judged
    assert "input error" not in out.split("error(s),")[0]


def test_one_mapping_without_kind_is_still_values(tmp_path, capsys):
    path = tmp_path / "values.yaml"
    path.write_text("global:\n  job: {framework: verl}\n---\nextra: 1\n")
    assert main(["--no-cache", str(path)]) == 2
    assert "a values file is a single mapping" in capsys.readouterr().out
