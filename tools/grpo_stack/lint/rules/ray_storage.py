"""GRPO814 ray-storage-narrow."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity
from ._podsecurity import all_containers, pod_label, where

CODE = "GRPO814"
NAME = "ray-storage-narrow"
SEVERITY = Severity.ERROR
CATEGORY = "hardening"
SUMMARY = "A Ray pod mounts a whole shared volume read-write instead of read-only plus writable subPaths."
DOC = """## What it does
In every RayCluster head and worker group, each mount of a PersistentVolumeClaim volume (the shared FSx file
system) must be `readOnly: true` or a `subPath` mount: the volume root read-only, and one read-write subPath
per directory the job writes (the checkpoint root; for miles also the torch_dist conversion output). A claim of
the set whose access modes are only `ReadWriteOnce`/`ReadWriteOncePod` is one pod's own disk (a Redis sidecar's
data), not a shared tree, and is not reported.

## Why is this bad?
The shared volume holds every model, dataset, checkpoint and evaluation result of every run. A Ray pod with
it mounted read-write can destroy all of them with one wrong path in a config (or one line of a reward
function), where the job only ever needs to write its own checkpoint directory.

## Example
```yaml
volumeMounts:
  - name: storage
    mountPath: /fsx
```
Use instead:
```yaml
volumeMounts:
  - {name: storage, mountPath: /fsx, readOnly: true}
  - {name: storage, mountPath: /fsx/checkpoints/run-1, subPath: checkpoints/run-1}
```

## Fix
Mount the volume read-only and add a subPath mount for each directory the job writes (the grpo-stack
raycluster chart derives them from global.job: raycluster.writablePaths).
"""


def check(ctx) -> Iterator[Hit]:
    # Claims of the set that one node mounts at a time: a pod's own disk (a Redis sidecar's data), not a shared tree.
    single_node = {c.name for c in ctx.of_kind("PersistentVolumeClaim") if _single_node(c.obj.get("spec"))}
    for o, pod_path, pod in ctx.pod_templates():
        if o.kind != "RayCluster":
            continue
        shared = {v.get("name") for v in pod.get("volumes") or [] if "persistentVolumeClaim" in v
                  and _claim(v.get("persistentVolumeClaim")) not in single_node}
        for field, i, c in all_containers(pod):
            for j, m in enumerate(c.get("volumeMounts") or []):
                if m.get("name") in shared and not m.get("readOnly") and not m.get("subPath"):
                    yield Hit(f"{where(pod_path, field, i)}.volumeMounts.{j}",
                              f"{pod_label(o, pod_path)}: shared volume {m['name']} is mounted read-write at "
                              f"{m.get('mountPath')}", obj=o)


def _single_node(spec) -> bool:
    """Only ReadWriteOnce/ReadWriteOncePod access modes: one node (one pod's own disk), not a shared tree."""
    modes = spec.get("accessModes") if isinstance(spec, dict) else None
    return (isinstance(modes, list) and bool(modes)
            and all(m in ("ReadWriteOnce", "ReadWriteOncePod") for m in modes))


def _claim(source) -> str | None:
    return str(source.get("claimName")) if isinstance(source, dict) else None
