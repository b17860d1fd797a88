"""GRPO859 host-namespaces."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from ..finding import Hit, Severity
from ._accelerators import asked as accelerators_asked
from ._objects import containers, pods_of

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
An NVIDIA GPU pod with `hostIPC` is reported too when it is the only pod of its workload (a bare Pod, a Deployment
or StatefulSet of one replica, a Job of parallelism 1): its processes share the pod's IPC namespace already, so the
node's adds nothing NCCL or a DataLoader needs; a memory-backed `/dev/shm` gives the room it is often set for.
Pods of several replicas (NCCL between pods on one node uses it) and NVIDIA MPS clients are left alone.

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
        if any(accelerators_asked(c) for c in pairs):
            if "hostIPC" in flags:
                yield from _lone_accelerator_pod(o, pod_path, pod, pairs)
            continue
        if any((c.get("securityContext") or {}).get("privileged") is True for c in pairs):
            continue
        yield Hit(f"{pod_path}.{flags[0]}", f"{o.kind} {o.name}: {' and '.join(flags)} share(s) the node's "
                  f"{' and '.join('IPC' if f == 'hostIPC' else 'process' for f in flags)} namespace with a pod that "
                  "asks for no accelerator and runs nothing privileged: nothing in it needs the node's", obj=o)


# Kinds whose pod count the template's own spec states (rules._objects.pods_of); a training operator's replicas
# are counted elsewhere.
COUNTED_KINDS = frozenset({"Pod", "Deployment", "ReplicaSet", "StatefulSet", "Job", "CronJob"})
MPS = re.compile(r"CUDA_MPS_|nvidia-mps")


def _lone_accelerator_pod(o, pod_path: str, pod: dict, pairs: list[dict]) -> Iterator[Hit]:
    """hostIPC on an NVIDIA GPU pod that is the only pod of its workload: its processes already share the pod's
    IPC namespace (NCCL's shared-memory transport and DataLoader workers included), so the node's adds only other
    tenants' segments; a memory-backed /dev/shm gives the room it is often set for. NVIDIA MPS clients, which talk
    to a daemon on the node, are left alone."""
    if o.kind not in COUNTED_KINDS or pods_of(o, pod_path) != 1 or MPS.search(json.dumps(pod)):
        return
    # NVIDIA GPUs only: other vendors' runtimes (Gaudi's, for one) document the node's IPC namespace for themselves
    if not all(name.startswith("nvidia.com/") for c in pairs for name in accelerators_asked(c)):
        return
    shm = any(m.get("mountPath") == "/dev/shm" for c in pairs for m in c.get("volumeMounts") or []
              if isinstance(m, dict))
    yield Hit(f"{pod_path}.hostIPC", f"{o.kind} {o.name}: hostIPC shares the node's IPC namespace with a "
              "GPU pod that runs alone: its processes already share the pod's own"
              + (", and it mounts a memory-backed /dev/shm" if shm else
                 "; for shared-memory room, mount an emptyDir with medium Memory at /dev/shm"), obj=o)
