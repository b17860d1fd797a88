"""GRPO859 host-namespaces."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity
from ._accelerators import asked as accelerators_asked
from ._objects import containers

CODE = "GRPO859"
NAME = "host-namespaces"
SEVERITY = Severity.WARNING
CATEGORY = "security"
SUMMARY = "A pod shares the node's IPC or process namespace (hostIPC, hostPID) with nothing in it that needs to."
DOC = """## What it does
Reads `hostIPC` and `hostPID` in every pod template, whatever the workload kind. Reported (a warning: what the
process does is in its code) when the pod is not a DaemonSet's (node agents: monitoring, device plugins) and no
container asks for an accelerator (GPU, TPU, Neuron, Gaudi) or runs privileged, the pods that may talk to the
node's drivers and daemons through them. A web server, an API wrapper or a UI with either flag is the usual case.

## Why is this bad?
`hostPID` lets the pod see, trace and signal every process of the node, other tenants' included; `hostIPC` opens
the node's shared memory segments and semaphores to it. Pod Security's `baseline` level refuses both, so the pod
also fails in any namespace that enforces it. A pod that talks HTTP needs neither.

## Example
```yaml
kind: Deployment
spec:
  template:
    spec:
      hostIPC: true
      containers:
        - {name: ui, image: registry.example.com/chat-ui:1.0.3, ports: [{containerPort: 5173}]}
```
Use instead:
```yaml
      containers:
        - {name: ui, image: registry.example.com/chat-ui:1.0.3, ports: [{containerPort: 5173}]}
```

## Fix
Remove `hostIPC` / `hostPID`. A GPU job that needs shared memory between its processes gets a memory-backed
`/dev/shm` (`emptyDir: {medium: Memory}`) instead.
"""


def check(ctx) -> Iterator[Hit]:
    for o, pod_path, pod in ctx.pod_templates():
        flags = [f for f in ("hostIPC", "hostPID") if pod.get(f) is True]
        if not flags or o.kind == "DaemonSet":
            continue
        pairs = [c for _field, _i, c in containers(pod)]
        if any(accelerators_asked(c) or (c.get("securityContext") or {}).get("privileged") is True for c in pairs):
            continue
        yield Hit(f"{pod_path}.{flags[0]}", f"{o.kind} {o.name}: {' and '.join(flags)} share(s) the node's "
                  f"{' and '.join('IPC' if f == 'hostIPC' else 'process' for f in flags)} namespace with a pod that "
                  "asks for no accelerator and runs nothing privileged: nothing in it needs the node's", obj=o)
