"""GRPO875 autoscaler-unrequested."""

from __future__ import annotations

from collections.abc import Iterator

from ...apivalidation.podspecs import containers
from ..finding import Hit, Severity
from ._autoscalers import autoscalers, resource_targets, target
from ._objects import mapping
from ._podsecurity import namespace_of

CODE = "GRPO875"
NAME = "autoscaler-unrequested"
SEVERITY = Severity.WARNING
CATEGORY = "correctness"
SUMMARY = ("An autoscaler targets a CPU or memory utilization, but a container of the pods it scales requests no "
           "CPU or memory: the HPA controller cannot compute it and never scales.")
DOC = """## What it does
Reads every `HorizontalPodAutoscaler` (`autoscaling/v1`, `v2`) and KEDA `ScaledObject` (`keda.sh`) whose target
workload is in the files, and the utilization targets it scales on:
- an `autoscaling/v1` HPA's `targetCPUUtilizationPercentage`, and an HPA with no metrics at all (both API
  versions default to 80 % CPU utilization);
- an `autoscaling/v2` metric of type `Resource` or `ContainerResource` whose `target.type` is `Utilization`;
- a ScaledObject trigger of type `cpu` or `memory` whose `metricType` (or older `metadata.type`) is `Utilization`.

For each, it reports the first container of the workload's pods (restartable init containers, which count
too, included; only the named container for `ContainerResource`) that requests none of that resource. A limit
without a request is the request (the API server copies it), a pod-level `resources.requests` of the resource
covers every container, and a `LimitRange` of the files in the same namespace with a container `defaultRequest`
or `default` for the resource gives one. Targets of type `AverageValue` or `Value` need no request and are not
read. A warning: a `LimitRange` applied elsewhere in the namespace would give the missing request.

## Why is this bad?
The HPA controller measures utilization as a share of what the pods request. Before it compares anything it sums
the requests of the pods' containers and stops at the first one that has none (`calculatePodRequests`,
kube-controller-manager's `podautoscaler/replica_calculator.go`: "missing request for cpu in container ..."). The
HPA then reports `ScalingActive=False` with reason `FailedGetResourceMetric` and never scales: a model server or
gateway stays at its minimum replicas however busy it gets. KEDA's `cpu` and `memory` triggers are the same
metric through the HPA KEDA creates.

## Example
```yaml
kind: HorizontalPodAutoscaler
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: gateway}
  metrics:
    - type: Resource
      resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}
---
kind: Deployment
metadata: {name: gateway}
spec:
  template:
    spec:
      containers: [{name: gateway, image: registry.example/gateway:1.4.0}]
```
Use instead:
```yaml
      containers:
        - name: gateway
          image: registry.example/gateway:1.4.0
          resources: {requests: {cpu: "1", memory: 2Gi}}
```

## Fix
Request the resource in every container of the scaled pods (the utilization is then a share of the requests'
sum), or scale on an `AverageValue` target, which needs no request.
"""

WORKLOADS = ("Deployment", "StatefulSet", "ReplicaSet", "ReplicationController")
DEFAULT_CPU = "80 % CPU utilization by default"


def _requests(c: dict, resource: str) -> bool:
    res = mapping(c.get("resources"))
    return resource in mapping(res.get("requests")) or resource in mapping(res.get("limits"))


def _defaulted(ctx, namespace: str, resource: str) -> bool:
    """Whether a LimitRange of the files gives the namespace's containers a request of the resource."""
    for lr in ctx.of_kind("LimitRange"):
        if namespace_of(lr, ctx.namespace) != namespace:
            continue
        limits = mapping(lr.obj.get("spec")).get("limits")
        for item in limits if isinstance(limits, list) else []:
            item = mapping(item)
            if item.get("type") == "Container" and (resource in mapping(item.get("defaultRequest"))
                                                    or resource in mapping(item.get("default"))):
                return True
    return False


def _unrequested(pod: dict, resource: str, container: str | None) -> str | None:
    """The first container the HPA controller finds without a request of the resource, or None."""
    if resource in mapping(mapping(pod.get("resources")).get("requests")):
        return None  # pod-level requests cover every container
    for field, _i, c in containers(pod):
        if field == "initContainers" and c.get("restartPolicy") != "Always":
            continue
        if container is not None and c.get("name") != container:
            continue
        if not _requests(c, resource):
            return str(c.get("name") or "?")
    return None


def check(ctx) -> Iterator[Hit]:
    workloads = {(namespace_of(o, ctx.namespace), o.kind, o.name): o for kind in WORKLOADS for o in ctx.of_kind(kind)}
    for o in autoscalers(ctx):
        scaled = target(o, ctx.namespace)
        workload = workloads.get(scaled) if scaled is not None else None
        if workload is None:
            continue
        namespace = scaled[0]
        pods = [pod for _o, path, pod in ctx.pod_templates_of(workload) if path == "spec.template.spec"]
        for path, resource, container, utilization in resource_targets(o):
            if not utilization or not pods or _defaulted(ctx, namespace, resource):
                continue
            missing = _unrequested(pods[0], resource, container)
            if missing is None:
                continue
            default = f" ({DEFAULT_CPU})" if path == "spec.scaleTargetRef" else ""
            yield Hit(path, f"{o.kind} {o.name} scales {workload.kind} {workload.name} on {resource} "
                      f"utilization{default}, but its container {missing} requests no {resource}: the HPA "
                      f"controller measures utilization against requests and stops (FailedGetResourceMetric: "
                      f"missing request for {resource}), so it never scales (assumed: no LimitRange of namespace "
                      f"{namespace!r} gives a default request)", obj=o,
                      remediation=f"request {resource} in container {missing}, or scale on an AverageValue target")
