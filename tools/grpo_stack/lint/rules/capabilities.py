"""GRPO812 capabilities."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity
from ._podsecurity import EFA_RESOURCE, all_containers, is_privileged, pod_label, requests_efa, where

CODE = "GRPO812"
NAME = "capabilities"
SEVERITY = Severity.ERROR
SUMMARY = "A container keeps default capabilities, or adds one that its workload does not justify."
DOC = """## What it does
Requires every non-privileged container to drop `ALL` capabilities. The only capability it may add back is
`IPC_LOCK`, and only in a container that requests `vpc.amazonaws.com/efa`.

## Why is this bad?
The runtime's default set includes NET_RAW (spoofing on the pod network), CHOWN, DAC_OVERRIDE, SETUID and more;
a root process (the Ray images run as root) keeps them all. EFA needs exactly one: libfabric's EFA provider pins
NCCL's buffers for RDMA, and pinned memory beyond RLIMIT_MEMLOCK needs CAP_IPC_LOCK. Nothing else in the stack
needs any.

## Example
```yaml
securityContext:
  capabilities:
    add: [IPC_LOCK, SYS_ADMIN]
```
Use instead:
```yaml
securityContext:
  capabilities:
    drop: ["ALL"]
    add: ["IPC_LOCK"]   # EFA workers only
```

## Fix
Drop ALL; add IPC_LOCK only to containers that request vpc.amazonaws.com/efa.
"""


def check(ctx) -> Iterator[Hit]:
    for o, pod_path, pod in ctx.pod_templates():
        for field, i, c in all_containers(pod):
            if is_privileged(c):
                continue
            caps = (c.get("securityContext") or {}).get("capabilities") or {}
            path = f"{where(pod_path, field, i)}.securityContext"
            label = f"{pod_label(o, pod_path)}: container {c.get('name')}"
            if "ALL" not in [str(x).upper() for x in caps.get("drop") or []]:
                yield Hit(path, f"{label} does not drop ALL capabilities", obj=o)
            for cap in caps.get("add") or []:
                name = str(cap).upper().removeprefix("CAP_")
                if name != "IPC_LOCK":
                    yield Hit(f"{path}.capabilities.add", f"{label} adds {cap}, which no grpo-stack workload needs",
                              obj=o)
                elif not requests_efa(c):
                    yield Hit(f"{path}.capabilities.add", f"{label} adds IPC_LOCK without requesting "
                              f"{EFA_RESOURCE} (only EFA's memory registration needs it)", obj=o)
