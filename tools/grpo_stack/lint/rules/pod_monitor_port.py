"""GRPO879 pod-monitor-port-undeclared."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity
from ._monitors import monitors, plain_selector, watched
from ._objects import containers, mapping, selector_matches
from ._podsecurity import namespace_of

CODE = "GRPO879"
NAME = "pod-monitor-port-undeclared"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = ("A PodMonitor scrapes a named port that the pods it selects do not declare: Prometheus gets no target "
           "from them.")
DOC = """## What it does
For every Prometheus Operator `PodMonitor` (`monitoring.coreos.com`) in the files, takes the pod templates of the set
that its `spec.selector.matchLabels` matches in the namespaces it watches (`spec.namespaceSelector.matchNames`, every
namespace with `any: true`, else its own), and each endpoint's `port` (`spec.podMetricsEndpoints[].port`, a port
name). When none of those pods declares a container port of that name, it is an error; when some do and others do
not, a warning naming the pods that are left out (a monitor meant for a head or leader alone is then intended). A
monitor whose selector uses `matchExpressions`, or that matches no pod template of the set (its pods may come from
elsewhere), is not judged, nor is an endpoint that gives a port number (`portNumber`, `targetPort`). KubeRay adds a
port named `metrics` to the Ray container of every head and worker pod that declares none, so Ray pods have one.

## Why is this bad?
The operator turns `port: metrics` into a relabelling rule that keeps only the pod targets whose container declares a
port named `metrics` (`__meta_kubernetes_pod_container_port_name`). A pod that serves its metrics on 8001 but
declares no such port is dropped silently: Prometheus shows no target, no error is raised anywhere, and the alerts and
autoscalers built on those metrics never see a value.

## Example
```yaml
kind: PodMonitor
spec:
  selector: {matchLabels: {app: worker}}
  podMetricsEndpoints: [{port: metrics}]
---
kind: Deployment
spec:
  template:
    metadata: {labels: {app: worker}}
    spec:
      containers: [{name: worker, image: registry.example.com/worker:1.2.0}]
```
Use instead:
```yaml
      containers:
        - name: worker
          image: registry.example.com/worker:1.2.0
          ports: [{name: metrics, containerPort: 8001}]
```

## Fix
Declare the metrics port under that name in the pods' containers (`ports[].name`), or name the port they declare.
"""


# KubeRay adds a port named `metrics` (8080) to the Ray container of every head and worker pod that declares none
# (ray-operator/controllers/ray/common/pod.go, DefaultHeadPodTemplate and DefaultWorkerPodTemplate).
RAY_KINDS = frozenset({"RayCluster", "RayJob", "RayService"})
RAY_METRICS_PORT = "metrics"


def _port_names(o, pod: dict) -> set[str]:
    declared = {str(p["name"]) for _field, _i, c in containers(pod) for p in c.get("ports") or []
                if isinstance(p, dict) and p.get("name")}
    return declared | ({RAY_METRICS_PORT} if o.kind in RAY_KINDS else set())


def check(ctx) -> Iterator[Hit]:
    found = monitors(ctx, "PodMonitor")
    if not found:
        return
    pods = [(o, pod, ctx.pod_labels(o, path)) for o, path, pod in ctx.pod_templates()]
    for monitor in found:
        spec = mapping(monitor.obj.get("spec"))
        wanted = plain_selector(monitor)
        if wanted is None:
            continue
        within = watched(monitor)
        matched = [(o, pod) for o, pod, labels in pods if (within is None or namespace_of(o, "") in within)
                   and selector_matches({"matchLabels": wanted}, labels)]
        if not matched:
            continue
        endpoints = spec.get("podMetricsEndpoints")
        for i, endpoint in enumerate(endpoints if isinstance(endpoints, list) else []):
            port = mapping(endpoint).get("port")
            if not isinstance(port, str) or not port:
                continue
            missing = [o for o, pod in matched if port not in _port_names(o, pod)]
            if not missing:
                continue
            names = ", ".join(sorted({f"{o.kind} {o.name}" for o in missing}))
            if len(missing) == len(matched):
                yield Hit(f"spec.podMetricsEndpoints.{i}.port", f"PodMonitor {monitor.name} scrapes the port named "
                          f"{port!r}, which no pod it selects declares ({names}): Prometheus gets no target from "
                          "them", obj=monitor)
            else:
                yield Hit(f"spec.podMetricsEndpoints.{i}.port", f"PodMonitor {monitor.name} scrapes the port named "
                          f"{port!r}, which {names} of the pods it selects do not declare: those are not scraped "
                          "(assumed: the monitor is meant for every pod it selects)", obj=monitor,
                          severity=Severity.WARNING)
