"""GRPO867 service-selects-no-pod."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..finding import Hit, Severity
from ._objects import containers
from ._podsecurity import namespace_of
from ._services import backends
from ._serving import stated_ports

CODE = "GRPO867"
NAME = "service-selects-no-pod"
SEVERITY = Severity.WARNING
CATEGORY = "correctness"
SUMMARY = ("A Service's selector matches no pod of the set, while pods there with a near label value declare the "
           "port it targets: the selector names a label the pods do not carry.")
DOC = """## What it does
For every Service written in the files whose selector matches none of the set's pod templates in its namespace
(with the labels their controllers add), looks for the pods it was meant for: pod templates that carry every key
of the selector, with a value that differs but shares a word with the selector's (`vllm-sim` and `vllm`), and
whose containers declare, or state with `--port`, the port the Service targets. When such pods exist, a warning
names their labels. A Service selecting a key no pod of the set carries (an operator's label such as
`training.kubeflow.org/job-name`), or whose pods no file here describes, is not judged: they may be applied
from elsewhere.

## Why is this bad?
A Service that selects no pod has no endpoints. Nothing fails at `kubectl apply`; clients of the name get
connection refused or time out, a load balancer reports every backend unhealthy, and the fault shows only when
someone calls it.

## Example
```yaml
kind: Deployment
spec:
  template:
    metadata: {labels: {app: reranker}}
    spec:
      containers: [{name: server, ports: [{containerPort: 8000}]}]
---
kind: Service
spec:
  selector: {app: reranker-gpu}
  ports: [{port: 80, targetPort: 8000}]
```
Use instead:
```yaml
  selector: {app: reranker}
```

## Fix
Select the labels the pods carry (`spec.template.metadata.labels`), or label the pods as the Service selects.
"""

WORD = re.compile(r"[a-z0-9]{3,}")


def _words(value: object) -> set[str]:
    return set(WORD.findall(str(value).lower()))


def _near(selected: str, carried: object) -> bool:
    values = carried if isinstance(carried, frozenset) else (carried,)
    return any(str(v) != selected and _words(v) & _words(selected) for v in values)


def _serves(pod: dict, targets: set) -> bool:
    for field, _i, c in containers(pod):
        if field != "containers":
            continue
        declared = [p for p in c.get("ports") or [] if isinstance(p, dict)]
        offered = {str(p.get("name")) for p in declared if p.get("name")}
        offered |= {str(p.get("containerPort")) for p in declared} | {str(n) for n in stated_ports(c)}
        if offered & targets:
            return True
    return False


def check(ctx) -> Iterator[Hit]:
    found = [b for b in backends(ctx) if b.obj.kind == "Service" and b.selector and not b.pods]
    if not found:
        return
    templates = ctx.pod_templates()
    for b in found:
        here = [(t, path, pod, ctx.pod_labels(t, path)) for t, path, pod in templates
                if namespace_of(t, ctx.namespace) == b.namespace]
        selector = {str(k): str(v) for k, v in b.selector.items()}
        targets = {str(p.target) for p in b.ports}
        meant = [(t, labels) for t, _path, pod, labels in here
                 if all(k in labels for k in selector)
                 and any(_near(v, labels[k]) for k, v in selector.items())
                 and all(labels[k] == v or _near(v, labels[k]) for k, v in selector.items())
                 and _serves(pod, targets)]
        if not meant:
            continue
        t, labels = meant[0]
        carried = {k: labels[k] for k in selector}
        yield Hit("spec.selector", f"Service {b.name} selects pods labelled {selector}, and no pod of the files "
                  f"carries those labels; {t.kind} {t.name}, whose containers declare the port the Service "
                  f"targets, labels its pods {carried}: the Service has no endpoints", obj=b.obj)
