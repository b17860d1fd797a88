"""GRPO812 capabilities."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity
from ._podsecurity import all_containers, folded, is_privileged, pod_label, requests_rdma, where

CODE = "GRPO812"
NAME = "capabilities"
SEVERITY = Severity.ERROR
CATEGORY = "hardening"
SUMMARY = "A container keeps default capabilities, or adds one that its workload does not justify."
DOC = """## What it does
Requires every non-privileged container to drop `ALL` capabilities. The only capability it may add back is
`IPC_LOCK`, and only in a container that requests an RDMA device: `vpc.amazonaws.com/efa`, or another RDMA
device plugin's resource (InfiniBand or RoCE: `rdma/hca_shared_devices_a`, `nvidia.com/rdma_...`,
`mellanox.com/...`).

## Why is this bad?
The runtime's default set includes NET_RAW (spoofing on the pod network), CHOWN, DAC_OVERRIDE, SETUID and more;
a root process (the Ray images run as root) keeps them all. EFA needs exactly one: libfabric's EFA provider pins
NCCL's buffers for RDMA, and pinned memory beyond RLIMIT_MEMLOCK needs CAP_IPC_LOCK; InfiniBand and RoCE verbs
register memory the same way. Nothing else in the stack needs any.

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
Drop ALL; add IPC_LOCK only to containers that request vpc.amazonaws.com/efa or another RDMA device.
"""


def check(ctx) -> Iterator[Hit]:
    return iter(()) if folded(ctx) else hits(ctx)


def hits(ctx) -> Iterator[Hit]:
    """Every pod template's findings, whatever the mode (GRPO809 folds them per pod in manifest mode)."""
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
                elif not requests_rdma(c):
                    yield Hit(f"{path}.capabilities.add", f"{label} adds IPC_LOCK without requesting an RDMA "
                              "device (EFA, InfiniBand or RoCE: only RDMA memory registration needs it)", obj=o)
