"""What the values ask of the cluster: every group of identical pods the release creates, how many, what each
requests and where it may go. Shared by the live preflight and the scheduler oracle (tests/controlplane)."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from ..apivalidation.podspecs import pod_metadata
from ..lint.context import LintContext, node_at

# The resources whose fit decides placement on GPU nodes, and the two the scheduler always counts.
GPU = "nvidia.com/gpu"
EFA = "vpc.amazonaws.com/efa"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"

_UNITS = {"n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "": Decimal(1),
          "k": Decimal(10) ** 3, "M": Decimal(10) ** 6, "G": Decimal(10) ** 9, "T": Decimal(10) ** 12,
          "P": Decimal(10) ** 15, "E": Decimal(10) ** 18,
          "Ki": Decimal(2) ** 10, "Mi": Decimal(2) ** 20, "Gi": Decimal(2) ** 30, "Ti": Decimal(2) ** 40,
          "Pi": Decimal(2) ** 50, "Ei": Decimal(2) ** 60}


def quantity(value: Any) -> Decimal:
    """A Kubernetes quantity as a number (kubernetes.utils.parse_quantity: the client's own parser)."""
    from kubernetes.utils import parse_quantity

    return Decimal(parse_quantity(value))


@dataclass
class PodGroup:
    """Pods made from one pod template: `replicas` copies of `spec`."""

    owner: str  # "RayCluster grpo-raycluster, worker group gpu": how findings name the pods
    spec: dict[str, Any]
    labels: dict[str, str]
    replicas: int
    values_key: str  # the values key that chose where these pods go (for locating findings)
    source: tuple[Any, str] = field(default=(None, ""), repr=False)  # (rendered object, dotted pod-spec path)

    @property
    def requests(self) -> dict[str, Decimal]:
        return pod_requests(self.spec)

    @property
    def instance_type(self) -> str | None:
        selector = self.spec.get("nodeSelector") or {}
        return str(selector[INSTANCE_TYPE]) if selector.get(INSTANCE_TYPE) else None


def pod_requests(spec: dict[str, Any]) -> dict[str, Decimal]:
    """Effective requests as the scheduler computes them: the larger of the containers' sum and the largest init
    container, per resource; a limit with no request is the request (the API server defaults it so)."""
    total: dict[str, Decimal] = {}
    init: dict[str, Decimal] = {}
    for list_name, into in (("containers", total), ("initContainers", init)):
        for c in spec.get(list_name) or []:
            res = c.get("resources") or {}
            for name, value in {**(res.get("limits") or {}), **(res.get("requests") or {})}.items():
                q = quantity(value)
                into[name] = into.get(name, Decimal(0)) + q if into is total else max(into.get(name, Decimal(0)), q)
    return {k: max(total.get(k, Decimal(0)), init.get(k, Decimal(0))) for k in {*total, *init}}


def pod_groups(ctx: LintContext) -> list[PodGroup]:
    """Every pod template the release runs (test hooks and DaemonSets apart), with its replica count."""
    out = []
    for o, path, spec in ctx.pod_templates():
        if o.is_test_hook or o.kind in ("DaemonSet", "CronJob"):
            continue
        replicas, where = _replicas(o.obj, path)
        if replicas < 1:
            continue
        labels = {str(k): str(v) for k, v in (pod_metadata(o.obj, path).get("labels") or {}).items()}
        out.append(PodGroup(f"{o.kind} {o.name}{where}", spec, labels, replicas, _values_key(ctx, o, path), (o, path)))
    return out


RAYJOB_CLUSTER = "spec.rayClusterSpec."  # job mode: the RayJob's cluster, counted as the RayCluster's


def _replicas(obj: dict[str, Any], path: str) -> tuple[int, str]:
    kind, spec = obj.get("kind"), obj.get("spec") or {}
    if kind == "RayJob" and path.startswith(RAYJOB_CLUSTER):
        obj, path, kind = {"spec": spec.get("rayClusterSpec") or {}}, "spec." + path[len(RAYJOB_CLUSTER):], "RayCluster"
    if kind == "RayCluster" and path.startswith("spec.workerGroupSpecs."):
        group = node_at(obj, ".".join(path.split(".")[:3])) or {}
        count = int(group.get("replicas", group.get("minReplicas", 0)) or 0) * int(group.get("numOfHosts") or 1)
        return count, f", worker group {group.get('groupName', '?')}"
    if kind == "RayCluster":
        return 1, ", head"
    if kind == "Job":
        return int(spec.get("parallelism", 1) or 0), ""
    if kind in ("Deployment", "StatefulSet", "ReplicaSet"):
        return int(spec.get("replicas", 1) if spec.get("replicas") is not None else 1), ""
    return 1, ""


def _values_key(ctx: LintContext, o, path: str) -> str:
    if o.kind in ("RayCluster", "RayJob"):
        return "global.cluster.gpuInstanceType" if "workerGroupSpecs" in path else "raycluster.head.instanceType"
    parts = o.template.split("/")
    section = parts[2] if len(parts) > 3 and parts[1] == "charts" else ""
    return f"{section}.instanceType" if ctx.get(f"{section}.instanceType") is not None else section
