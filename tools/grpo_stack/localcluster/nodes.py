"""kwok Node objects made from the instance catalogue (what an EKS node of that type advertises)."""

from __future__ import annotations

import re
from typing import Any

from ..catalog.instances import InstanceType, lookup

INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
GPU_RESOURCE = "nvidia.com/gpu"
EFA_RESOURCE = "vpc.amazonaws.com/efa"
# The taint GPU node groups carry so that CPU pods stay off them; the chart's GPU pods tolerate it (Exists).
GPU_TAINT = {"key": GPU_RESOURCE, "value": "true", "effect": "NoSchedule"}
# kubelet's default --max-pods; the catalogue has no per-type pod limit (EKS's depends on the CNI's settings).
MAX_PODS = 110
ZONE = "us-west-2a"
# Karpenter's well-known node labels (karpenter.sh docs, "Well-Known Labels"): family and size are the two halves of
# the EC2 name, category its leading letters, generation the digits after them.
KARPENTER = "karpenter.k8s.aws/"
_FAMILY = re.compile(r"^([a-z]+)([0-9]+)")


def karpenter_labels(instance_type: str) -> dict[str, str]:
    family, dot, size = instance_type.partition(".")
    m = _FAMILY.match(family)
    if not dot or not m or instance_type.startswith("ml."):
        return {}
    return {f"{KARPENTER}instance-family": family, f"{KARPENTER}instance-size": size,
            f"{KARPENTER}instance-category": m.group(1), f"{KARPENTER}instance-generation": m.group(2)}


def node_object(name: str, instance_type: str, *, labels: dict[str, str] | None = None,
                taints: list[dict[str, str]] | None = None, row: InstanceType | None = None) -> dict[str, Any]:
    """A Node kwok manages: the catalogue row's (or the given `row`'s) allocatable CPU, memory, GPUs and EFA, EKS's
    and Karpenter's well-known labels.

    GPU types get the `nvidia.com/gpu` NoSchedule taint unless `taints` is given."""
    row = row or lookup(instance_type)
    if row is None:
        raise ValueError(f"{instance_type} is not in the instance catalogue (tools/grpo_stack/catalog/instances.py)")
    resources = {"cpu": f"{row.allocatable_millicpu}m", "memory": f"{row.allocatable_memory_mib}Mi",
                 "pods": str(MAX_PODS)}
    if row.gpus:
        resources[GPU_RESOURCE] = str(row.gpus)
    if row.efa:
        resources[EFA_RESOURCE] = str(row.efa)
    if taints is None:
        taints = [dict(GPU_TAINT)] if row.gpus else []
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "annotations": {"kwok.x-k8s.io/node": "fake"},
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                INSTANCE_TYPE_LABEL: row.name,
                "topology.kubernetes.io/zone": ZONE,
                "type": "kwok",
                **karpenter_labels(row.name),
                **(labels or {}),
            },
        },
        "spec": {"taints": taints},
        "status": {"allocatable": resources, "capacity": dict(resources)},
    }
