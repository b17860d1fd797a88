"""Which nodes a pod group may run on, read as the scheduler's filters read them: node selector, required node
affinity, taints, cordon, and allocatable resources (running pods are not subtracted: this is a preflight)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from .plan import PodGroup, quantity


def node_labels(node: dict[str, Any]) -> dict[str, str]:
    return (node.get("metadata") or {}).get("labels") or {}


def allocatable(node: dict[str, Any], resource: str) -> Decimal:
    value = ((node.get("status") or {}).get("allocatable") or {}).get(resource)
    return quantity(value) if value is not None else Decimal(0)


def _term_matches(term: dict[str, Any], labels: dict[str, str]) -> bool:
    for expr in term.get("matchExpressions") or []:
        key, op, values = expr.get("key"), expr.get("operator"), [str(v) for v in expr.get("values") or []]
        have = labels.get(key)
        if op == "In" and have not in values:
            return False
        if op == "NotIn" and have in values:
            return False
        if op == "Exists" and have is None:
            return False
        if op == "DoesNotExist" and have is not None:
            return False
        if op in ("Gt", "Lt"):
            try:
                if not (int(have) > int(values[0]) if op == "Gt" else int(have) < int(values[0])):
                    return False
            except (TypeError, ValueError, IndexError):
                return False
    return True


def selects(spec: dict[str, Any], node: dict[str, Any]) -> bool:
    """The pod's nodeSelector and required node affinity admit the node."""
    labels = node_labels(node)
    if any(labels.get(k) != str(v) for k, v in (spec.get("nodeSelector") or {}).items()):
        return False
    required = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    terms = required.get("nodeSelectorTerms") or []
    return not terms or any(_term_matches(t, labels) for t in terms)


def _tolerates(toleration: dict[str, Any], taint: dict[str, Any]) -> bool:
    if toleration.get("effect") and toleration.get("effect") != taint.get("effect"):
        return False
    if toleration.get("operator") == "Exists":
        return not toleration.get("key") or toleration.get("key") == taint.get("key")
    return toleration.get("key") == taint.get("key") and (toleration.get("value") or "") == (taint.get("value") or "")


def untolerated_taints(spec: dict[str, Any], node: dict[str, Any]) -> list[dict[str, Any]]:
    tolerations = spec.get("tolerations") or []
    return [t for t in (node.get("spec") or {}).get("taints") or []
            if t.get("effect") in ("NoSchedule", "NoExecute") and not any(_tolerates(x, t) for x in tolerations)]


def short_resources(group: PodGroup, node: dict[str, Any]) -> list[str]:
    """Resources the node's allocatable cannot give one pod of the group (the scheduler's 'Insufficient X')."""
    return [name for name, need in sorted(group.requests.items()) if need > 0 and allocatable(node, name) < need]


def pods_per_node(group: PodGroup, node: dict[str, Any]) -> int:
    """How many pods of the group the empty node holds by its allocatable (GPU and EFA pods pack by device)."""
    fits = []
    for name, need in group.requests.items():
        if need > 0:
            fits.append(int(allocatable(node, name) // need))
    return min(fits) if fits else 110
