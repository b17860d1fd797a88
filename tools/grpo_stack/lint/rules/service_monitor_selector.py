"""GRPO865 service-monitor-selects-no-service."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity
from ._monitors import monitors, plain_selector, watched
from ._objects import mapping
from ._podsecurity import namespace_of

CODE = "GRPO865"
NAME = "service-monitor-selects-no-service"
SEVERITY = Severity.WARNING
CATEGORY = "correctness"
SUMMARY = ("A ServiceMonitor's selector matches no Service of the set, while a Service there has the port its "
           "endpoints scrape: the selector names the pods' labels, not the Service's.")
DOC = """## What it does
For every Prometheus Operator `ServiceMonitor` (`monitoring.coreos.com`) in the files, takes the Services of the
set in the namespaces it looks in (`spec.namespaceSelector.matchNames`, every namespace with `any: true`, else
its own) and its label selector (`spec.selector.matchLabels`). When no such Service carries those labels, but one
declares the port name an endpoint scrapes (`spec.endpoints[].port`), that Service is the one meant: a warning
naming the labels it does carry. A monitor whose selector uses `matchExpressions`, or whose port no Service of
the set declares (its Service may be applied from elsewhere), is not judged.

## Why is this bad?
A ServiceMonitor selects Services by the Services' own `metadata.labels`, not by the labels in their
`spec.selector` (the pods'). A Service written with a pod selector and no labels of its own is invisible to it:
Prometheus gets no target, no error is raised anywhere, and the dashboards and alerts built on the metrics stay
empty until someone notices.

## Example
```yaml
kind: Service
metadata: {name: inference, namespace: serving}
spec:
  selector: {app: inference}
  ports: [{name: metrics, port: 8002}]
---
kind: ServiceMonitor
spec:
  namespaceSelector: {matchNames: [serving]}
  selector: {matchLabels: {app: inference}}
  endpoints: [{port: metrics}]
```
Use instead:
```yaml
kind: Service
metadata: {name: inference, namespace: serving, labels: {app: inference}}
```

## Fix
Give the Service the labels the ServiceMonitor selects (`metadata.labels`), or select the labels it has.
"""

def _port_names(service) -> set[str]:
    ports = mapping(service.obj.get("spec")).get("ports")
    return {str(p["name"]) for p in ports or [] if isinstance(p, dict) and p.get("name")} if isinstance(
        ports, list) else set()


def check(ctx) -> Iterator[Hit]:
    services = ctx.of_kind("Service")
    if not services:
        return
    for monitor in monitors(ctx, "ServiceMonitor"):
        spec = mapping(monitor.obj.get("spec"))
        wanted = plain_selector(monitor)
        if wanted is None:
            continue
        watched_in = watched(monitor)
        seen = [s for s in services if watched_in is None or namespace_of(s, "") in watched_in]
        labels_of = {id(s): mapping(mapping(s.obj.get("metadata")).get("labels")) for s in seen}
        if any(all(labels_of[id(s)].get(k) == str(v) for k, v in wanted.items()) for s in seen):
            continue
        ports = {str(e["port"]) for e in spec.get("endpoints") or [] if isinstance(e, dict) and e.get("port")}
        meant = [s for s in seen if ports & _port_names(s)]
        if not meant:
            continue
        target = meant[0]
        shown = labels_of[id(target)] or "none"
        yield Hit("spec.selector.matchLabels", f"ServiceMonitor {monitor.name} selects Services labelled {wanted}, "
                  f"and no Service it watches has those labels; Service {target.name}, which declares the port "
                  f"{sorted(ports & _port_names(target))[0]} it scrapes, is labelled {shown} (a ServiceMonitor "
                  "reads a Service's own labels, not its pod selector): Prometheus gets no target", obj=monitor)
