"""GRPO618 over the whole instance catalogue: for every catalogued type, a pod that asks for the labels a node of
that type carries is admitted, and a pod that asks for any one of them with another value is reported, by
nodeSelector and by required node affinity alike. Karpenter's label names and meanings are those of
karpenter-provider-aws' well-known labels (instance-family, -category, -generation, -size, -cpu, -memory in MiB,
-gpu-count); whether a real node carries them is the kubelet's and Karpenter's business and is not run here."""

from __future__ import annotations

import yaml
from grpo_stack.catalog.instances import INSTANCE_TYPES
from grpo_stack.lint.release import lint_manifests
from grpo_stack.lint.rules.node_selector_contradiction import node_labels


def _job(name: str, selector: dict, expressions: list | None = None) -> dict:
    spec: dict = {"restartPolicy": "Never", "automountServiceAccountToken": False, "nodeSelector": selector,
                  "containers": [{"name": "c", "image": "ghcr.io/acme/check:1.0.0",
                                  "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}
    if expressions:
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": expressions}]}}}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": "evals"},
            "spec": {"template": {"spec": spec}}}


def _other(value: str) -> str:
    return str(int(value) + 1) if value.isdigit() else f"{value}x"


def test_every_type_and_every_derived_label(tmp_path):
    docs, bad = [], set()
    for i, (name, _) in enumerate(sorted(INSTANCE_TYPES.items())):
        labels = node_labels(name)
        assert "karpenter.k8s.aws/instance-family" in labels and "karpenter.k8s.aws/instance-gpu-count" in labels
        docs.append(_job(f"good-{i}", labels))
        docs.append(_job(f"good-affinity-{i}", {"node.kubernetes.io/instance-type": name},
                         [{"key": k, "operator": "In", "values": [v]} for k, v in labels.items()]))
        for j, (key, value) in enumerate(labels.items()):
            if key == "node.kubernetes.io/instance-type":
                continue
            docs.append(_job(f"bad-{i}-{j}", {"node.kubernetes.io/instance-type": name, key: _other(value)}))
            bad.add(f"bad-{i}-{j}")
            docs.append(_job(f"bad-notin-{i}-{j}", {"node.kubernetes.io/instance-type": name},
                             [{"key": key, "operator": "NotIn", "values": [value]}]))
            bad.add(f"bad-notin-{i}-{j}")
    path = tmp_path / "jobs.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    result = lint_manifests(str(path))
    reported = {f.message.split(":")[0].removeprefix("Job ") for f in result.findings if f.code == "GRPO618"}
    assert reported == bad, (sorted(reported - bad)[:5], sorted(bad - reported)[:5])


def test_a_hyperpod_or_foreign_name_derives_no_karpenter_label():
    assert set(node_labels("ml.p5en.48xlarge")) == {"node.kubernetes.io/instance-type",
                                                    "beta.kubernetes.io/instance-type"}
    assert set(node_labels("a2-highgpu-8g")) == {"node.kubernetes.io/instance-type",
                                                 "beta.kubernetes.io/instance-type"}
