"""The autoscalers of a set (HorizontalPodAutoscalers, KEDA ScaledObjects) and the workloads they scale (not a
rule: no CODE)."""

from __future__ import annotations

from collections.abc import Iterator

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


def resource_targets(o) -> Iterator[tuple[str, str, str | None, bool]]:
    """(key path, resource, container or None, whether the target is a utilization) for each CPU or memory target of
    an autoscaler: an `autoscaling/v1` HPA's `targetCPUUtilizationPercentage`, an HPA with no metrics (both API
    versions default to 80 % CPU utilization), an `autoscaling/v2` `Resource` or `ContainerResource` metric, a KEDA
    `cpu` or `memory` trigger (`metricType`, or the older `metadata.type`)."""
    spec = mapping(o.obj.get("spec"))
    if o.kind == "ScaledObject":
        triggers = spec.get("triggers")
        for i, t in enumerate(triggers if isinstance(triggers, list) else []):
            t = mapping(t)
            if t.get("type") in ("cpu", "memory"):
                meta = mapping(t.get("metadata"))
                container = meta.get("containerName")
                yield (f"spec.triggers.{i}", t["type"], container if isinstance(container, str) and container else None,
                       (t.get("metricType") or meta.get("type")) == "Utilization")
        return
    metrics = spec.get("metrics")
    if str(o.obj.get("apiVersion", "")) == "autoscaling/v1" or not metrics:
        cpu = "targetCPUUtilizationPercentage" in spec
        yield "spec.targetCPUUtilizationPercentage" if cpu else "spec.scaleTargetRef", "cpu", None, True
        return
    for i, m in enumerate(metrics if isinstance(metrics, list) else []):
        m = mapping(m)
        kind = m.get("type")
        source = mapping(m.get("resource") if kind == "Resource" else
                         m.get("containerResource") if kind == "ContainerResource" else None)
        if source.get("name") not in ("cpu", "memory"):
            continue
        container = source.get("container") if kind == "ContainerResource" else None
        # autoscaling/v2beta1 wrote the utilization as targetAverageUtilization
        utilization = mapping(source.get("target")).get("type") == "Utilization" or "targetAverageUtilization" in source
        yield f"spec.metrics.{i}", source["name"], container if isinstance(container, str) else None, utilization


def resource_metrics(o) -> set[str]:
    """The pod resources (cpu, memory) an autoscaler scales on, whatever its target type."""
    return {resource for _path, resource, _container, _utilization in resource_targets(o)}
