"""GRPO625 gpu-rollout-surge."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity
from ._accelerators import asked as accelerators_asked
from ._objects import containers
from ._quantity import whole
from ._rollout import replicas, rolling_update, scaled

CODE = "GRPO625"
NAME = "gpu-rollout-surge"
SEVERITY = Severity.WARNING
CATEGORY = "correctness"
SUMMARY = ("A GPU Deployment or RayService rolls out by surging: every rollout needs spare GPUs that a full node pool "
           "does not have.")
DOC = """## What it does
For every Deployment whose pods request accelerators (`nvidia.com/gpu`, `amd.com/gpu`, `google.com/tpu`,
`aws.amazon.com/neuron`, ...) and whose strategy is
`RollingUpdate` (the default), resolves `maxSurge` as the Deployment controller does (default 25 %, rounded up:
1 pod for up to 4 replicas) and warns that each rollout creates that many new pods before old ones stop, so it
needs surge x GPUs-per-pod spare GPUs.

For every RayService whose Ray pods request accelerators and whose `upgradeStrategy.type` is `NewCluster` (the
default when no `upgradeStrategy` is given, with the operator's zero-downtime upgrades on, as they are by default),
warns the same way: each change of `rayClusterConfig` makes KubeRay build a second, pending RayCluster of the new
spec at full size, switch traffic once it is ready and only then delete the old one, so the upgrade needs as many
spare accelerators as the cluster holds ("200 % of their original cluster's compute resources", KubeRay's guide to
incremental upgrades).

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
replaced in place), unless the node pool keeps spare GPUs for rollouts. For a RayService,
`upgradeStrategy: {type: NewClusterWithIncrementalUpgrade}` (KubeRay 1.5.1 and later, with the Gateway API)
scales the new cluster up as the old one scales down; `type: None` builds no second cluster (a cluster change is
then applied by re-creating the RayService).
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
    yield from _ray_service_upgrades(ctx)


def _ray_service_upgrades(ctx) -> Iterator[Hit]:
    for o in ctx.of_kind("RayService"):
        spec = o.obj.get("spec") if isinstance(o.obj.get("spec"), dict) else {}
        strategy = spec.get("upgradeStrategy")
        kind = strategy.get("type") if isinstance(strategy, dict) else None
        if kind not in (None, "NewCluster"):
            continue
        cluster = spec.get("rayClusterConfig") if isinstance(spec.get("rayClusterConfig"), dict) else {}
        gpus = _cluster_gpus(cluster)
        if gpus:
            yield Hit("spec.upgradeStrategy" if strategy else "spec", f"RayService {o.name}: a change of "
                      f"rayClusterConfig builds a second RayCluster at full size before the old one goes "
                      f"(upgradeStrategy {kind or 'NewCluster, the default'}), so each upgrade needs {gpus:g} spare "
                      "GPUs; on a node pool without them the new cluster stays Pending and the upgrade never "
                      "completes", obj=o)


def _cluster_gpus(cluster: dict) -> float:
    """Accelerators a RayCluster spec holds at its stated size (a worker group at its replicas, else minReplicas)."""
    head = cluster.get("headGroupSpec") if isinstance(cluster.get("headGroupSpec"), dict) else {}
    total = _gpus(((head.get("template") or {}).get("spec") or {}) if isinstance(head.get("template"), dict) else {})
    for group in cluster.get("workerGroupSpecs") or []:
        if not isinstance(group, dict) or not isinstance(group.get("template"), dict):
            continue
        pod = group["template"].get("spec") if isinstance(group["template"].get("spec"), dict) else {}
        count = whole(group.get("replicas"), whole(group.get("minReplicas"), 1))
        total += _gpus(pod) * max(count, 0) * max(whole(group.get("numOfHosts"), 1), 1)
    return total
