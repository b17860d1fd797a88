"""GRPO846 device-limits."""

from __future__ import annotations

from collections.abc import Iterator

from ...apivalidation import quantity
from ..finding import Hit, Severity
from ._accelerators import asked as accelerators_asked
from ._objects import containers
from ._one_shot import inspects_only

CODE = "GRPO846"
NAME = "device-limits"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = ("A container requests GPUs or EFA interfaces without an equal limit, or a GPU container states no "
           "memory at all.")
DOC = """## What it does
For every container in every pod template: an extended device resource (`nvidia.com/gpu`, MIG slices
`nvidia.com/mig-*`, `amd.com/gpu`, `vpc.amazonaws.com/efa`, `aws.amazon.com/neuron*`) in `requests` must appear in
`limits` with the same count (an error), and a container that gets accelerators (GPUs whole or MIG slices, TPUs,
Neuron devices, Gaudis: the names in `_accelerators.py`) should state its memory: a warning when it has neither a
memory request nor a memory limit, in a server, notebook or Ray cluster and in a batch job alike (a Job, a training
job's replicas). A memory request without a limit is a deliberate choice (the node's memory is reserved for it,
and it may burst) and is not reported, nor is a GPU smoke test: a container whose stated command runs only
programs that inspect the device (`nvidia-smi`, CUDA's `deviceQuery` or `vectorAdd`, `sleep`, `echo`).

## Why is this bad?
Extended resources cannot be overcommitted: the API server rejects a request without an equal limit, so the
object fails at apply (after the rest of the release went in), or — with a limit lower than the request — is
refused with a message far from the values that produced it. A GPU pod that states no memory is scheduled as if
it needed none, and runs in the BestEffort class: the scheduler may place it beside pods that hold the node's
memory, it is the first the kubelet evicts under memory pressure, and the OOM kill then lands on whichever pod the
kernel picks. A training job that holds one GPU of eight shares its node as a server does; one evicted hours in
loses everything since its last checkpoint.

## Example
```yaml
resources:
  requests: {nvidia.com/gpu: 8, vpc.amazonaws.com/efa: 16}
```
Use instead:
```yaml
resources:
  requests: {nvidia.com/gpu: 8, vpc.amazonaws.com/efa: 16, cpu: "180", memory: 1800Gi}
  limits: {nvidia.com/gpu: 8, vpc.amazonaws.com/efa: 16, memory: 1800Gi}
```

## Fix
Put every device count in `limits` (equal to the request) and give GPU containers a memory request (and a limit
where the node is shared).
"""

DEVICE_PREFIXES = ("nvidia.com/gpu", "nvidia.com/mig-", "amd.com/gpu", "vpc.amazonaws.com/efa", "aws.amazon.com/neuron",
                   "google.com/tpu", "habana.ai/gaudi", "gpu.intel.com/")


def check(ctx) -> Iterator[Hit]:
    for o, pod_path, pod in ctx.pod_templates():
        for field, i, c in containers(pod):
            res = c.get("resources") if isinstance(c.get("resources"), dict) else {}
            requests = res.get("requests") if isinstance(res.get("requests"), dict) else {}
            limits = res.get("limits") if isinstance(res.get("limits"), dict) else {}
            path = f"{pod_path}.{field}.{i}.resources"
            name = c.get("name", i)
            for key in sorted(set(requests) | set(limits)):
                if not str(key).startswith(DEVICE_PREFIXES):
                    continue
                if key in requests and not _equal(requests.get(key), limits.get(key)):
                    shown = f"limit {limits[key]}" if key in limits else "no limit"
                    yield Hit(f"{path}.requests", f"{o.kind} {o.name}: container {name} requests {key} "
                              f"{requests[key]} with {shown}; extended resources need an equal limit", obj=o)
            devices = accelerators_asked(c)
            if devices and "memory" not in limits and "memory" not in requests and not inspects_only(c):
                what = ", ".join(f"{n:g} {k}" for k, n in sorted(devices.items()))
                yield Hit(path, f"{o.kind} {o.name}: container {name} gets {what} and states no memory "
                          "(neither a request nor a limit)", obj=o, severity=Severity.WARNING)


def _equal(request, limit) -> bool:
    """Equal as quantities (`16` and `1.6E+1` are one count), as the API server compares them."""
    if limit is None:
        return False
    a, b = quantity.parse(request), quantity.parse(limit)
    return a == b if a is not None and b is not None else str(request) == str(limit)
