"""The autoscalers of a set (HorizontalPodAutoscalers, KEDA ScaledObjects) and the workloads they scale (not a
rule: no CODE)."""

from __future__ import annotations

from ._objects import mapping
from ._podsecurity import namespace_of
from ._quantity import whole

KEDA = "keda.sh/"
# KEDA's default `maxReplicaCount` (ScaledObject spec).
KEDA_MAX_REPLICAS = 100


def autoscalers(ctx) -> list:
    """Every HorizontalPodAutoscaler (`autoscaling/*`) and KEDA ScaledObject of the set."""
    found = [o for o in ctx.of_kind("HorizontalPodAutoscaler")
             if str(o.obj.get("apiVersion", "")).startswith("autoscaling/")]
    return found + [o for o in ctx.of_kind("ScaledObject") if str(o.obj.get("apiVersion", "")).startswith(KEDA)]


def target(o, namespace: str) -> tuple[str, str, str] | None:
    """(namespace, kind, name) of the workload an autoscaler scales; a ScaledObject's kind defaults to Deployment,
    as KEDA defaults it."""
    ref = mapping(mapping(o.obj.get("spec")).get("scaleTargetRef"))
    name = ref.get("name")
    if not isinstance(name, str) or not name:
        return None
    kind = ref.get("kind") or ("Deployment" if o.kind == "ScaledObject" else None)
    if not isinstance(kind, str):
        return None
    return namespace_of(o, namespace), kind, name


def max_replicas(o) -> int:
    """The most replicas the autoscaler may set."""
    spec = mapping(o.obj.get("spec"))
    if o.kind == "ScaledObject":
        return whole(spec.get("maxReplicaCount"), KEDA_MAX_REPLICAS)
    return whole(spec.get("maxReplicas"), 1)


def scaled_to(ctx) -> dict[tuple[str, str, str], int]:
    """The most replicas any autoscaler of the set may give each workload it targets."""
    most: dict[tuple[str, str, str], int] = {}
    for o in autoscalers(ctx):
        key = target(o, ctx.namespace)
        if key is not None:
            most[key] = max(most.get(key, 0), max_replicas(o))
    return most


def scaled_pods(ctx, o, pod_path: str, pods: int) -> int:
    """A workload's pod count raised to what an autoscaler of the set may scale it to."""
    if pod_path != "spec.template.spec":
        return pods
    return max(pods, ctx.derived("autoscaled-to", lambda: scaled_to(ctx)).get(
        (namespace_of(o, ctx.namespace), o.kind, o.name), 0))


def resource_metrics(o) -> set[str]:
    """The pod resources (cpu, memory) an autoscaler scales on, whatever its target type: an `autoscaling/v1` HPA
    and an HPA with no metrics scale on CPU."""
    spec = mapping(o.obj.get("spec"))
    if o.kind == "ScaledObject":
        triggers = spec.get("triggers")
        return {t.get("type") for t in triggers if isinstance(t, dict) and t.get("type") in ("cpu", "memory")} \
            if isinstance(triggers, list) else set()
    metrics = spec.get("metrics")
    if str(o.obj.get("apiVersion", "")) == "autoscaling/v1" or not metrics:
        return {"cpu"}
    found = set()
    for m in metrics if isinstance(metrics, list) else []:
        m = mapping(m)
        source = mapping(m.get("resource") if m.get("type") == "Resource" else
                         m.get("containerResource") if m.get("type") == "ContainerResource" else None)
        if source.get("name") in ("cpu", "memory"):
            found.add(source["name"])
    return found
