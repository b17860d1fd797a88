"""Kinds with no bundled schema: one note per kind for the whole run, never one error per object, never silent."""

from __future__ import annotations

import json

from grpo_stack.cli.lint import main

JOBSET = """apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {{name: js-{i}, namespace: team}}
spec:
  replicatedJobs:
    - name: workers
      template:
        spec:
          template:
            spec:
              restartPolicy: Never
              containers:
                - {{name: w, image: "python:3.11.15", imagePullPolicy: IfNotPresent}}
"""
LWS = """apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {{name: lws-{i}, namespace: team}}
spec:
  leaderWorkerTemplate:
    workerTemplate:
      spec:
        containers:
          - {{name: w, image: "python:3.11.15", imagePullPolicy: IfNotPresent}}
"""


def lint(capsys, *argv):
    # Object schemas and image pinning are what these tests are about; the pod-security rules (GRPO81x) would
    # report the minimal fixtures' pods too.
    code = main(["--format", "json", "--select", "GRPO002,GRPO701", *argv])
    out = capsys.readouterr()
    return code, json.loads(out.out), out.err


def notes(err: str) -> list[str]:
    return [line for line in err.splitlines() if "not schema-checked" in line]


def test_custom_kinds_reported_once_per_kind_across_files(capsys, tmp_path):
    """Foreign manifests full of custom resources were one object-schema error per object (noise that buried
    the real findings); now each kind is named once with its count, and the exit status is untouched."""
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text("---\n".join([JOBSET.format(i=1), JOBSET.format(i=2), LWS.format(i=1)]))
    b.write_text(JOBSET.format(i=3))
    code, doc, err = lint(capsys, str(a), str(b))
    assert code == 0, doc
    assert not [f for f in doc["findings"] if f["code"] == "GRPO002"], doc
    assert notes(err) == [
        "grpo-lint: note: not schema-checked: 3 object(s) of kind JobSet (jobset.x-k8s.io/v1alpha2); no bundled "
        "schema for this kind (their pod templates were linted)",
        "grpo-lint: note: not schema-checked: 1 object(s) of kind LeaderWorkerSet (leaderworkerset.x-k8s.io/v1); "
        "no bundled schema for this kind (their pod templates were linted)",
    ]


def test_pods_of_unchecked_kinds_are_still_linted(capsys, tmp_path):
    """Not schema-checked is not unchecked: a floating image inside a JobSet is still found."""
    p = tmp_path / "js.yaml"
    p.write_text(JOBSET.format(i=1).replace("python:3.11.15", "python:latest"))
    code, doc, err = lint(capsys, str(p))
    assert code == 1 and [f["code"] for f in doc["findings"]] == ["GRPO701"] and notes(err)


def test_removed_api_version_or_misspelt_kind_of_kubernetes_is_still_an_error(capsys, tmp_path):
    """A Kubernetes group without that kind/version is a real mistake (the apply fails), not a custom resource."""
    p = tmp_path / "old.yaml"
    p.write_text("apiVersion: extensions/v1beta1\nkind: Deployment\nmetadata: {name: d, namespace: team}\n"
                 "---\napiVersion: apps/v1\nkind: Deploymnet\nmetadata: {name: e, namespace: team}\n")
    code, doc, err = lint(capsys, str(p))
    schema = [f for f in doc["findings"] if f["code"] == "GRPO002"]
    assert code == 1 and len(schema) == 2 and not notes(err)
    assert "extensions/v1beta1" in schema[0]["message"] and "Deploymnet" in schema[1]["message"]


def test_sig_project_group_under_k8s_io_is_a_custom_resource_not_a_kubernetes_kind(capsys, tmp_path):
    """`autoscaling.k8s.io` (the VerticalPodAutoscaler's CRD) shares its first label with Kubernetes' own
    `autoscaling` group, which the API server serves; it is a custom resource, named as not checked. A misspelt
    kind in a group the API server does serve (`networking.k8s.io`) is still an error."""
    p = tmp_path / "vpa.yaml"
    p.write_text("apiVersion: autoscaling.k8s.io/v1\nkind: VerticalPodAutoscaler\n"
                 "metadata: {name: web, namespace: t}\n"
                 "spec: {targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}}\n"
                 "---\napiVersion: networking.k8s.io/v1\nkind: Ingres\nmetadata: {name: typo, namespace: t}\n")
    code, doc, err = lint(capsys, str(p))
    schema = [f for f in doc["findings"] if f["code"] == "GRPO002"]
    assert code == 1 and len(schema) == 1 and "Ingres" in schema[0]["message"], doc
    assert notes(err) and "VerticalPodAutoscaler (autoscaling.k8s.io/v1)" in notes(err)[0]


def test_no_note_when_every_kind_has_a_schema(capsys, tmp_path):
    p = tmp_path / "cm.yaml"
    p.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: team}\ndata: {a: b}\n")
    code, _, err = lint(capsys, str(p))
    assert code == 0 and not notes(err)


def test_kubernetes_kind_promoted_past_the_bundled_release_is_noted_not_an_error(capsys, tmp_path):
    """`resource.k8s.io/v1` (DRA, GA from Kubernetes 1.34) is served by clusters newer than the bundled schemas,
    which have the kind only at pre-release versions: it is named as not checked, never called wrong. A version
    past a GA one (`apps/v2`) or a removed one (`autoscaling/v2beta2`) is still an error."""
    p = tmp_path / "claims.yaml"
    p.write_text("apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: gpus, namespace: t}\n"
                 "spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}]}}}\n")
    code, doc, err = lint(capsys, str(p))
    assert code == 0 and not doc["findings"], doc
    assert notes(err) and "ResourceClaimTemplate (resource.k8s.io/v1)" in notes(err)[0]
    q = tmp_path / "wrong.yaml"
    q.write_text("apiVersion: apps/v2\nkind: Deployment\nmetadata: {name: d, namespace: t}\n---\n"
                 "apiVersion: autoscaling/v2beta2\nkind: HorizontalPodAutoscaler\nmetadata: {name: h, namespace: t}\n")
    code, doc, err = lint(capsys, str(q))
    assert code == 1 and len([f for f in doc["findings"] if f["code"] == "GRPO002"]) == 2 and not notes(err)
