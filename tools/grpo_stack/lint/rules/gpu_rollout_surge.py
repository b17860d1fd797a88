"""GRPO625 gpu-rollout-surge."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity
from ._accelerators import asked as accelerators_asked
from ._objects import containers
from ._rollout import replicas, rolling_update, scaled

CODE = "GRPO625"
NAME = "gpu-rollout-surge"
SEVERITY = Severity.WARNING
CATEGORY = "correctness"
SUMMARY = "A GPU Deployment rolls out by surging: every rollout needs spare GPUs that a full node pool does not have."
DOC = """## What it does
For every Deployment whose pods request accelerators (`nvidia.com/gpu`, `amd.com/gpu`, `google.com/tpu`,
`aws.amazon.com/neuron`, ...) and whose strategy is
`RollingUpdate` (the default), resolves `maxSurge` as the Deployment controller does (default 25 %, rounded up:
1 pod for up to 4 replicas) and warns that each rollout creates that many new pods before old ones stop, so it
needs surge x GPUs-per-pod spare GPUs.

It is a warning: grpo-lint cannot see the cluster, so it cannot know whether those GPUs are free (an autoscaled
node pool may add a node; a reserved one usually cannot).

## Why is this bad?
GPU node pools are sized to the workload. A surge pod that finds no free GPU stays Pending, the old pod keeps
running, and the rollout stalls until `progressDeadlineSeconds` reports it failed: the new version never
starts, and every later change waits behind it.

## Example
```yaml
kind: Deployment
spec:
  replicas: 1
  template:
    spec:
      containers:
        - resources: {limits: {nvidia.com/gpu: 8}}
```
Use instead:
```yaml
kind: Deployment
spec:
  replicas: 1
  strategy: {type: Recreate}   # or rollingUpdate: {maxSurge: 0, maxUnavailable: 1}
```

## Fix
Use `strategy: {type: Recreate}`, or `rollingUpdate: {maxSurge: 0, maxUnavailable: 1}` (one pod at a time is
replaced in place), unless the node pool keeps spare GPUs for rollouts.
"""


def _gpus(pod: dict) -> float:
    total = 0.0
    for field, _, c in containers(pod):
        asked = max(accelerators_asked(c).values(), default=0.0)
        total = total + asked if field == "containers" else max(total, asked)
    return total


def check(ctx) -> Iterator[Hit]:
    for o in ctx.of_kind("Deployment"):
        pod = ((o.obj.get("spec") or {}).get("template") or {}).get("spec") or {}
        gpus = _gpus(pod) if isinstance(pod, dict) else 0
        params = rolling_update(o.obj)
        if not gpus or params is None:
            continue
        surge = scaled(params["maxSurge"], replicas(o.obj), round_up=True)
        if surge:
            yield Hit("spec.strategy", f"Deployment {o.name}: a rollout starts {surge} new pod(s) before old ones "
                      f"stop (maxSurge {params['maxSurge']}), so it needs {surge * gpus:g} spare GPUs; on a node "
                      "pool without them the new pods stay Pending and the rollout stalls", obj=o)
