"""What a release's manifests ask of the cluster, read from Helm's own output: pods per instance type, selectors."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import yaml
from grpo_stack.localcluster.nodes import INSTANCE_TYPE_LABEL


def load_manifests(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(text) if d]


def pod_templates(obj: dict[str, Any]) -> Iterator[tuple[str, int, dict[str, Any]]]:
    """(role, replicas, pod spec) for every pod an object makes: Pod, Deployment, Job, RayCluster (or RayJob)
    head/workers."""
    kind, spec = obj.get("kind"), obj.get("spec") or {}
    if kind == "Pod":
        yield obj["metadata"]["name"], 1, spec
    elif kind in ("Deployment", "StatefulSet", "ReplicaSet"):
        yield obj["metadata"]["name"], int(spec.get("replicas", 1)), spec["template"]["spec"]
    elif kind == "Job":
        yield obj["metadata"]["name"], int(spec.get("parallelism", 1)), spec["template"]["spec"]
    elif kind == "RayJob":  # job mode: the cluster KubeRay makes from its rayClusterSpec
        yield from pod_templates({"kind": "RayCluster", "metadata": obj["metadata"],
                                  "spec": spec.get("rayClusterSpec") or {}})
    elif kind == "RayCluster":
        yield f"{obj['metadata']['name']}/head", 1, spec["headGroupSpec"]["template"]["spec"]
        for group in spec.get("workerGroupSpecs", []):
            yield (f"{obj['metadata']['name']}/{group['groupName']}", int(group.get("replicas", 0)),
                   group["template"]["spec"])


def pods_per_instance_type(objects: list[dict[str, Any]]) -> Counter:
    """Instance type -> how many pods select it (by the chart's `node.kubernetes.io/instance-type` selector)."""
    counts: Counter = Counter()
    for obj in objects:
        for _, replicas, spec in pod_templates(obj):
            instance_type = (spec.get("nodeSelector") or {}).get(INSTANCE_TYPE_LABEL)
            if instance_type:
                counts[instance_type] += replicas
    return counts


def network_policy_selectors(objects: list[dict[str, Any]]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(where, podSelector) for every pod selector of every NetworkPolicy that names pods of its own namespace:
    the policy's own target and each peer without a namespaceSelector. Empty selectors (all pods) are left out."""
    for obj in objects:
        if obj.get("kind") != "NetworkPolicy":
            continue
        name, spec = obj["metadata"]["name"], obj["spec"]
        if spec.get("podSelector"):
            yield f"NetworkPolicy {name} .spec.podSelector", spec["podSelector"]
        for direction, peer_key in (("ingress", "from"), ("egress", "to")):
            for i, rule in enumerate(spec.get(direction) or []):
                for j, peer in enumerate(rule.get(peer_key) or []):
                    if peer.get("podSelector") and "namespaceSelector" not in peer:
                        yield f"NetworkPolicy {name} .spec.{direction}[{i}].{peer_key}[{j}]", peer["podSelector"]
