"""GRPO402 service-selector-overreach."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity
from ._services import RAY_HEAD_DEFAULT_PORTS, backends

CODE = "GRPO402"
NAME = "service-selector-overreach"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = ("A Service meant for the Ray head also selects the cluster's workers, or a release's Service selects "
           "another release's pods.")
DOC = """## What it does
Follows each Service's selector to the pods it matches (with the labels KubeRay, JobSet, LeaderWorkerSet and
the workload controllers add, in every controller), and reports:

- a Service on a port only the Ray head listens on (GCS 6379, dashboard 8265, client 10001, by number or by
  KubeRay's port names) whose selector also matches the worker pods of that cluster (`ray.io/cluster: x` without
  `ray.io/node-type: head`);
- a Service labelled `app.kubernetes.io/instance: A` whose selector matches pods labelled
  `app.kubernetes.io/instance: B` (the selector leaves the instance out, so every release of the chart in the
  namespace is behind it).

## Why is this bad?
A Service balances connections over every ready pod it selects. Connections meant for the head's GCS or job API
land on workers, where nothing listens on those ports: `ray job submit` and Ray clients fail at random, one
attempt in as many as there are workers. A Service that also selects another release's pods sends one release's
requests to the other's model or trainer.

## Example
```yaml
kind: Service
spec:
  selector: {ray.io/cluster: raycluster}
  ports: [{name: dashboard, port: 8265}]
```
Use instead:
```yaml
  selector: {ray.io/cluster: raycluster, ray.io/node-type: head}
```

## Fix
Add the label that singles out the intended pods to the selector: `ray.io/node-type: head` for the Ray head,
`app.kubernetes.io/instance: <release>` for a release's own pods.
"""

HEAD_ONLY_PORTS = {p for name, p in RAY_HEAD_DEFAULT_PORTS.items() if name != "serve"}
HEAD_ONLY_NAMES = {name for name in RAY_HEAD_DEFAULT_PORTS if name != "serve"}
INSTANCE = "app.kubernetes.io/instance"


def _head_only(port) -> bool:
    return port.name in HEAD_ONLY_NAMES or str(port.target) in {str(p) for p in HEAD_ONLY_PORTS} \
        or port.target in HEAD_ONLY_NAMES


def check(ctx) -> Iterator[Hit]:
    for b in backends(ctx):
        if b.obj.kind != "Service" or not b.selector:
            continue
        labels = [(o, path, ctx.pod_labels(o, path)) for o, path, _pod in b.pods]
        roles: dict[int, set] = {}
        for o, _p, lb in labels:
            roles.setdefault(id(o), set()).add(lb.get("ray.io/node-type"))
        both = [o for o, _p, _lb in labels if {"head", "worker"} <= roles[id(o)]]
        head_ports = [p for p in b.ports if _head_only(p)]
        if both and head_ports:
            port = head_ports[0]
            yield Hit("spec.selector", f"Service {b.name} serves port {port.port} ({port.name or port.target}), "
                      f"which only the Ray head of {both[0].kind} {both[0].name} listens on, but its selector also "
                      "matches that cluster's worker pods", obj=b.obj)
        meta = b.obj.obj.get("metadata") if isinstance(b.obj.obj.get("metadata"), dict) else {}
        own = (meta.get("labels") or {}).get(INSTANCE) if isinstance(meta.get("labels"), dict) else None
        if own is None or INSTANCE in b.selector:
            continue
        others = sorted({f"{o.kind} {o.name} ({lb[INSTANCE]})" for o, _p, lb in labels
                         if isinstance(lb.get(INSTANCE), str) and lb[INSTANCE] != str(own)})
        if others:
            yield Hit("spec.selector", f"Service {b.name} belongs to release {own} but its selector also matches "
                      f"the pods of another release: {', '.join(others[:3])}", obj=b.obj)
