"""GRPO857 service-target-port."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity
from ._objects import containers
from ._services import backends
from ._serving import stated_ports

CODE = "GRPO857"
NAME = "service-target-port"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "A Service targets a port that no container of the pods it selects declares."
DOC = """## What it does
Follows every Service written in the files (any type) to the pod templates its selector matches, in any
controller, and reads each of its ports' `targetPort` (the `port` when unset):
- **error**: a port *name* that no container of those pods declares: Kubernetes cannot resolve it, so the
  Service has no endpoint on that port;
- **warning**: a port *number* that no container of those pods lists while every one of them says where it
  listens (its `ports`, or its own `--port N` flag where it lists none); container ports are informational, so
  the process may still listen there: the finding names what is declared.

A Service whose pods are in no file here is not judged (they may be applied from another file), nor are the head
Services KubeRay creates itself.

## Why is this bad?
Traffic to the Service goes nowhere: clients get connection refused or time out, health checks of a load
balancer fail, and a Prometheus scrape of the port finds no target. Nothing fails at `kubectl apply`.

## Example
```yaml
kind: Service
spec:
  selector: {app: server}
  ports: [{name: http, port: 8080, targetPort: 8080}]
---
# the pods behind it
containers:
  - name: server
    args: ["--port", "8000"]
    ports: [{containerPort: 8000}]
```
Use instead:
```yaml
  ports: [{name: http, port: 8080, targetPort: 8000}]
```

## Fix
Target the port the server listens on, by the name or number its container declares.
"""


def check(ctx) -> Iterator[Hit]:
    for b in backends(ctx):
        if b.obj.kind != "Service" or not b.pods:
            continue
        names: set[str] = set()
        numbers: set[int] = set()
        known = True  # every container says where it listens (declared ports or its own --port flag)
        for _o, _path, pod in b.pods:
            for field, _i, c in containers(pod):
                if field != "containers":
                    continue
                declared = [p for p in c.get("ports") or [] if isinstance(p, dict)]
                names |= {str(p["name"]) for p in declared if p.get("name")}
                mine = {p["containerPort"] for p in declared if isinstance(p.get("containerPort"), int)}
                mine |= stated_ports(c)
                known = known and bool(mine)
                numbers |= mine
        pods = ", ".join(sorted({f"{o.kind} {o.name}" for o, _path, _pod in b.pods}))
        for j, p in enumerate(b.ports):
            target, where = p.target, f"spec.ports.{j}.targetPort"
            if isinstance(target, str) and not target.isdigit() and target not in names:
                yield Hit(where, f"Service {b.name} targets port {target!r}, which no container of {pods} declares "
                          f"({_listed(names, numbers)}): the Service has no endpoint on it", obj=b.obj)
            elif known and numbers and str(target).isdigit() and int(target) not in numbers:
                yield Hit(where, f"Service {b.name} targets port {target}, which no container of {pods} lists "
                          f"({_listed(names, numbers)})", obj=b.obj, severity=Severity.WARNING,
                          remediation="target the port the server listens on, and declare it")


def _listed(names: set[str], numbers: set[int]) -> str:
    shown = sorted(names) + [str(n) for n in sorted(numbers)]
    return "it declares " + ", ".join(shown) if shown else "it declares no port"
