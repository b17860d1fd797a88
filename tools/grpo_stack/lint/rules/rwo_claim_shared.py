"""GRPO624 rwo-claim-shared."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity
from ._accelerators import asked
from ._autoscalers import scaled_pods
from ._objects import claim_volumes, containers, pinned_to_node, pods_of, runs_to_completion
from ._rollout import replicas, rolling_update, scaled

CODE = "GRPO624"
NAME = "rwo-claim-shared"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "A ReadWriteOnce claim is mounted by several pods that can run on different nodes."
DOC = """## What it does
For every PersistentVolumeClaim of the release whose access modes are only `ReadWriteOnce` or `ReadWriteOncePod`,
counts the pods that mount it by `claimName`: a Deployment's, ReplicaSet's or StatefulSet's replicas (or the most an
HPA or a KEDA ScaledObject of the set scales it to), a Job's parallelism, every Ray group (a worker group at its
replicas or maxReplicas, the head), a JobSet's replicated jobs, a LeaderWorkerSet's groups x size, any DaemonSet,
and every other workload that names the claim. More than one pod is reported (an error; a warning where the pods can
take the claim in turn: finite work that runs one pod at a time, a Job, beside at most one pod that runs until
stopped, which the Job's volume is free for once it has finished; pods that are all such finite work, the steps of a
pipeline, are not reported), unless every mounting pod is pinned to one node (`nodeName`, or a
`kubernetes.io/hostname` node selector), at each workload that mounts the claim: any of them can be the one whose
pod waits. A Deployment whose one pod asks for an accelerator and is the claim's one pod, but rolls out with
`RollingUpdate` (the default) and a `maxSurge` above zero, runs its new pod beside the old one for the rollout: a
warning, naming the assumption that the new pod lands on another node (where it waits for the volume and the rollout
never completes), as it must where the old pod holds the node's GPUs. A pod without an accelerator may as well be
placed on the same node, and is not judged for it. A `ReadWriteOnce` claim bound (`volumeName`) to a
PersistentVolume of the set that is a node's own directory (`hostPath`, or `local`, which its node affinity keeps on
one node) is not judged: nothing attaches it, so no pod waits for it.

## Why is this bad?
A `ReadWriteOnce` volume attaches to one node. The second pod on another node stays in ContainerCreating with
`Multi-Attach error for volume ... Volume is already used by pod(s)`; with `ReadWriteOncePod` even a second pod
on the same node is refused. GPU pods, which fill their nodes, always land on different nodes, so a model cache
or checkpoint claim shared this way works in a one-replica test and hangs at the first scale-up.

## Example
```yaml
kind: PersistentVolumeClaim
metadata: {name: models}
spec: {accessModes: [ReadWriteOnce]}
---
kind: Deployment
spec:
  replicas: 2
  template:
    spec:
      volumes: [{name: models, persistentVolumeClaim: {claimName: models}}]
```
Use instead:
```yaml
kind: PersistentVolumeClaim
metadata: {name: models}
spec: {accessModes: [ReadWriteMany]}   # a shared filesystem: FSx for Lustre, EFS, Filestore
```

## Fix
Use a `ReadWriteMany` (or `ReadOnlyMany`) claim on a shared filesystem, or give each pod its own claim (a
StatefulSet's `volumeClaimTemplates`). A one-replica Deployment on such a claim rolls out with
`strategy: {type: Recreate}`: the old pod releases the volume before the new one starts.
"""

ONE_NODE = ("ReadWriteOnce", "ReadWriteOncePod")


def _on_node_directory(ctx, claim, modes: list[str]) -> bool:
    """A ReadWriteOnce claim bound to a PersistentVolume of the set that is a directory of a node: a `hostPath`
    (never attached: each pod mounts its own node's directory) or a `local` volume (its node affinity schedules
    every pod that mounts it onto that node). ReadWriteOncePod still admits one pod."""
    wanted = (claim.obj.get("spec") or {}).get("volumeName")
    if not wanted or "ReadWriteOncePod" in modes:
        return False
    for pv in ctx.of_kind("PersistentVolume"):
        spec = pv.obj.get("spec") if isinstance(pv.obj.get("spec"), dict) else {}
        if pv.name == wanted and (isinstance(spec.get("hostPath"), dict) or isinstance(spec.get("local"), dict)):
            return True
    return False


def check(ctx) -> Iterator[Hit]:
    claims = {}
    for c in ctx.of_kind("PersistentVolumeClaim"):
        modes = (c.obj.get("spec") or {}).get("accessModes") or []
        if modes and all(m in ONE_NODE for m in modes) and not _on_node_directory(ctx, c, modes):
            claims[c.name] = modes
    if not claims:
        return
    mounters: dict[str, list] = {name: [] for name in claims}
    for o, pod_path, pod in ctx.pod_templates():
        for _, _, claim in claim_volumes(pod):
            if claim in mounters:
                mounters[claim].append((o, pod_path, pod))
    for name, users in mounters.items():
        total = sum(scaled_pods(ctx, o, path, pods_of(o, path)) for o, path, _ in users)
        if total == 1 and not pinned_to_node(users[0][2]):
            yield from _rollout_surge(name, claims[name], *users[0])
        if total < 2 or all(pinned_to_node(pod) for _, _, pod in users) or _steps_only(users):
            continue
        where = ", ".join(sorted({_workload(ctx, u, p) for u, p, _ in users}))
        severity, assumed = (Severity.WARNING, " (assumed: they run at once; a Job that has finished no longer holds "
                             "the volume, so one applied after it ends starts)") if _in_turn(ctx, users) else (None, "")
        reported = set()
        for o, path, _ in users:  # each workload that mounts it: any of them can be the pod left waiting
            if (o.kind, o.name, path) in reported:
                continue
            reported.add((o.kind, o.name, path))
            yield Hit(f"{path}.volumes", f"claim {name} is {'/'.join(claims[name])} (one node) but {where} can run "
                      f"{total if total > 2 or len(users) > 1 else 'several'} pods that mount it; a pod on a second "
                      f"node stays in ContainerCreating (Multi-Attach error){assumed}", obj=o, severity=severity)


def _workload(ctx, o, path: str) -> str:
    """The workload as the finding names it, with the replicas an autoscaler of the set may give it."""
    pods = pods_of(o, path)
    scaled = scaled_pods(ctx, o, path, pods)
    return f"{o.kind} {o.name}" + (f" (an autoscaler takes it to {scaled})" if scaled > pods else "")


def _steps_only(users: list) -> bool:
    """Every pod that mounts the claim is finite work that runs one pod at a time (the steps of a pipeline: data
    generation, training, evaluation Jobs): each holds the volume only while it runs, and nothing that runs until
    stopped keeps it, so they overlap only where they are started together, which the files do not say."""
    return all(o.kind != "CronJob" and runs_to_completion(o, path, pod) and pods_of(o, path) <= 1
               for o, path, pod in users)  # a CronJob comes back on its schedule, beside whatever else runs then


def _in_turn(ctx, users: list) -> bool:
    """The claim's pods can take it in turn: at most one pod runs until stopped, and each other workload is finite
    work running one pod at a time (a Job that writes what a server then reads). Whether they overlap depends on
    when each is applied, which the files do not say."""
    lasting = 0
    for o, path, pod in users:
        count = pods_of(o, path)
        if runs_to_completion(o, path, pod):
            if count > 1:
                return False
        else:
            lasting += scaled_pods(ctx, o, path, count)
    return lasting <= 1


def _rollout_surge(claim: str, modes: list[str], o, path: str, pod: dict) -> Iterator[Hit]:
    """The claim's one pod is a Deployment's accelerator pod that rolls out by starting its new pod before the old
    one stops."""
    if o.kind != "Deployment" or not any(asked(c) for _field, _i, c in containers(pod)):
        return
    params = rolling_update(o.obj)
    surge = scaled(params["maxSurge"], replicas(o.obj), round_up=True) if params else None
    if surge:
        yield Hit("spec.strategy", f"claim {claim} is {'/'.join(modes)} (one node) and Deployment {o.name} rolls out "
                  f"with RollingUpdate (maxSurge {params['maxSurge']}): the new pod starts beside the old one, and on "
                  "another node it stays in ContainerCreating (Multi-Attach error) while the old pod keeps the "
                  "volume, so the rollout never completes (assumed: the scheduler may place it on another node)",
                  obj=o, severity=Severity.WARNING,
                  remediation="strategy: {type: Recreate}, or a ReadWriteMany claim")
