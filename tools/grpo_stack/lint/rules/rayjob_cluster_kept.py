"""GRPO869 rayjob-cluster-kept."""

from __future__ import annotations

from collections.abc import Iterator

from ..context import node_at
from ..finding import Hit, Severity
from ._accelerators import asked as accelerators_asked
from ._objects import containers, mapping

CODE = "GRPO869"
NAME = "rayjob-cluster-kept"
SEVERITY = Severity.WARNING
CATEGORY = "cost"
SUMMARY = ("A RayJob that makes its own RayCluster with accelerators keeps that cluster, and its GPUs, after the "
           "job ends: shutdownAfterJobFinishes is not true.")
DOC = """## What it does
Reads every KubeRay `RayJob` (`ray.io`) that brings its own cluster (`spec.rayClusterSpec`; one that submits to an
existing cluster through `clusterSelector` makes none) and whose head or worker groups ask for accelerators
(`nvidia.com/gpu`, `amd.com/gpu`, Neuron, Gaudi, TPUs: the container resources, or `num-gpus` in `rayStartParams`).
Unless `spec.shutdownAfterJobFinishes` is `true`, or a `deletionStrategy` says what to delete when the job ends, it
is a warning: the cluster stays up after the job, holding every accelerator its groups took.

## Why is this bad?
KubeRay deletes a RayJob's cluster only when `shutdownAfterJobFinishes` is true (`ttlSecondsAfterFinished` after the
job ends); the field has no default in the CRD, so left out it is false, and the RayCluster with its head and workers
keeps running until someone deletes the RayJob (KubeRay's rayjob_controller). A batch inference or training job
then holds its GPUs idle for hours after its last step, and a queue (Kueue) admits nothing in their place. The
warning names the assumption that nobody means to keep the finished cluster to inspect it (then delete the RayJob
when done, or set `ttlSecondsAfterFinished` for the time that takes).

## Example
```yaml
kind: RayJob
spec:
  entrypoint: python infer.py
  rayClusterSpec:
    workerGroupSpecs:
      - template: {spec: {containers: [{name: w, resources: {limits: {nvidia.com/gpu: 1}}}]}}
```
Use instead:
```yaml
kind: RayJob
spec:
  entrypoint: python infer.py
  shutdownAfterJobFinishes: true
  ttlSecondsAfterFinished: 300   # time to read the logs before KubeRay deletes the cluster
  rayClusterSpec: ...
```

## Fix
Set `shutdownAfterJobFinishes: true` and a `ttlSecondsAfterFinished` long enough to read the head's logs (grpo-stack's
job mode sets both), or submit to a long-lived cluster with `clusterSelector` on purpose.
"""


def check(ctx) -> Iterator[Hit]:
    for o in ctx.of_kind("RayJob"):
        if not str(o.obj.get("apiVersion", "")).startswith("ray.io/"):
            continue
        spec = mapping(o.obj.get("spec"))
        if not mapping(spec.get("rayClusterSpec")) or spec.get("shutdownAfterJobFinishes") is True \
                or spec.get("deletionStrategy"):
            continue
        held = _accelerators(ctx, o)
        if held:
            stated = "is false" if spec.get("shutdownAfterJobFinishes") is False else "is not set (false)"
            yield Hit("spec.shutdownAfterJobFinishes" if "shutdownAfterJobFinishes" in spec else "spec",
                      f"RayJob {o.name}: shutdownAfterJobFinishes {stated}, so the RayCluster it makes, with "
                      f"{held}, stays up after the job ends until the RayJob is deleted (assumed: nobody means to "
                      "keep the finished cluster to inspect it)", obj=o)


def _accelerators(ctx, o) -> str:
    """Where the cluster's groups hold accelerators, in words (`accelerators in the head, group gpu`), or ''."""
    held = []
    for _owner, pod_path, pod in ctx.pod_templates_of(o):
        group = mapping(node_at(o.obj, pod_path.rsplit(".template.spec", 1)[0]))
        asked = any(n for _f, _i, c in containers(pod) for n in accelerators_asked(c).values())
        gpus = str(mapping(group.get("rayStartParams")).get("num-gpus", "")).strip("'\"")
        if asked or (gpus.replace(".", "", 1).isdigit() and float(gpus) > 0):
            index = pod_path.split("workerGroupSpecs.", 1)[1].split(".", 1)[0] if "workerGroupSpecs." in pod_path \
                else None
            held.append("the head" if index is None else f"group {group.get('groupName', index)}")
    return ("accelerators in " + ", ".join(held)) if held else ""
