"""What a local cluster needs for a set of values files: kwok nodes per instance type, and the namespace's
prerequisites. Read from what the release renders (the live preflight's own view of its pods), never from a
second reading of the values."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from ..catalog.instances import InstanceType
from ..lint.engine import values_context
from ..lint.rules.capacity import node_type, unknown_type_message
from ..preflight.nodes import pods_per_node
from ..preflight.plan import INSTANCE_TYPE, PodGroup, pod_groups
from .nodes import node_object
from .prerequisites import FSX_CAPACITY

HOSTNAME = "kubernetes.io/hostname"


class PlanError(ValueError):
    pass


@dataclass(frozen=True)
class NodeShape:
    instance_type: str
    count: int
    labels: dict[str, str] = field(default_factory=dict)  # what the pods select besides the instance type
    row: dict[str, Any] = field(default_factory=dict)  # the capacity of a type the values state (not catalogued)


@dataclass(frozen=True)
class Namespace:
    name: str
    secret: str
    secret_key: str
    claim: str
    capacity: str


@dataclass(frozen=True)
class Plan:
    nodes: list[NodeShape]
    namespace: Namespace

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Plan:
        return cls([NodeShape(**n) for n in data["nodes"]], Namespace(**data["namespace"]))


def plan(paths: list[str], namespace: str, release: str = "grpo") -> Plan:
    """Nodes enough for every pod of the release (as the scheduler would pack them on empty nodes) and the
    namespace objects a user prepares before `helm install`. Raises InputError for a values file grpo-lint would
    refuse, PlanError for an instance type neither the catalogue nor the values describe."""
    ctx, _ = values_context(paths, release=release, namespace=namespace)
    shapes: dict[tuple[str, tuple], int] = {}
    rows: dict[str, InstanceType] = {}
    for group in pod_groups(ctx):
        name = group.instance_type
        if not name:
            continue
        row = rows.get(name) or node_type(ctx, name)
        if row is None:
            raise PlanError(unknown_type_message(name))
        rows[name] = row
        labels = tuple(sorted(_required_labels(group).items()))
        shapes[(name, labels)] = shapes.get((name, labels), 0) + _nodes_for(group, name, row)
    nodes = [NodeShape(name, count, dict(labels), _stated_row(rows[name]))
             for (name, labels), count in sorted(shapes.items())]
    g = lambda key: ctx.get(f"global.{key}")  # noqa: E731 - the merged values the chart renders from
    return Plan(nodes, Namespace(namespace, g("secrets.hfToken.name"), g("secrets.hfToken.key"),
                                 g("storage.claimName"), g("storage.capacity") or FSX_CAPACITY))


def _nodes_for(group: PodGroup, name: str, row: InstanceType) -> int:
    per_node = 1 if _one_per_host(group) else pods_per_node(group, node_object("plan", name, row=row))
    return group.replicas if per_node < 1 else math.ceil(group.replicas / per_node)


def _one_per_host(group: PodGroup) -> bool:
    """Required anti-affinity over the hostname: the scheduler puts one such pod on a node."""
    anti = ((group.spec.get("affinity") or {}).get("podAntiAffinity") or {})
    return any(t.get("topologyKey") == HOSTNAME
               for t in anti.get("requiredDuringSchedulingIgnoredDuringExecution") or [])


def _required_labels(group: PodGroup) -> dict[str, str]:
    """Labels a node must carry for these pods: their nodeSelector and each required `In`/`Exists` term."""
    labels = {k: str(v) for k, v in (group.spec.get("nodeSelector") or {}).items() if k != INSTANCE_TYPE}
    affinity = ((group.spec.get("affinity") or {}).get("nodeAffinity") or {})
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or {}
    for term in (required.get("nodeSelectorTerms") or [])[:1]:  # terms are ORed: the first is enough
        for expr in term.get("matchExpressions") or []:
            if expr.get("key") == INSTANCE_TYPE:
                continue
            if expr.get("operator") == "In" and expr.get("values"):
                labels[expr["key"]] = str(expr["values"][0])
            elif expr.get("operator") == "Exists":
                labels[expr["key"]] = "true"
    return labels


def _stated_row(row: InstanceType) -> dict[str, Any]:
    from ..catalog.instances import lookup

    return {} if lookup(row.name) else asdict(row)
