"""GRPO818 shared-volume-writable."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator

from ..finding import Hit, Severity
from ..shell import config_map_data
from ._cache_paths import download_mounts, known_env, mount_index
from ._objects import argv_of, claim_volumes, replica_spec, runs_to_completion
from ._podsecurity import all_containers, is_ray_pod, pod_label, where

CODE = "GRPO818"
NAME = "shared-volume-writable"
SEVERITY = Severity.ERROR
CATEGORY = "security"
SUMMARY = "A pod other than the Ray pods mounts a whole shared volume read-write (no readOnly, no subPath)."
DOC = """## What it does
GRPO814's check for every other pod: in each Deployment, Job, CronJob, StatefulSet, DaemonSet, bare Pod or custom
resource with a pod template (utility pods, evaluation drivers, servers, sidecars and init containers included),
each mount of a PersistentVolumeClaim volume must be `readOnly: true` (on the mount, or on the volume's
`persistentVolumeClaim`) or a `subPath` mount. A claim of the set whose access modes are only
`ReadWriteOnce`/`ReadWriteOncePod` is one pod's own disk, not a shared tree, and is not reported. A claim not in the
set is the FSx volume in the chart's own output (an error). On other manifests a claim may as well be the pod's own
disk (a notebook's home, a UI's database, a benchmark's results on a ReadWriteMany claim made for it), so it is
judged only where something says it is shared: several pod templates of the files mount it, the workload runs
several pods (`replicas`, `parallelism` above 1, a DaemonSet) on a claim the files do not declare (one they
declare for that workload alone holds what its replicas write), or its name says a shared file system (`fsx`, `efs`,
`nfs`, `lustre`, `filestore`, `azurefile`, `cephfs`, `shared`, `rwx`): a warning naming the assumption that the
volume holds more than the workload writes (on the labelled foreign corpora most such mounts were a project's own
jobs and servers sharing their data by design), or, where the files do not declare the claim, that it is shared at
all. The chart's own output mounts the FSx volume every run shares: an error there. A pod that runs to completion (a
Job's, one under restartPolicy Never or OnFailure, a training replica restarted only on failure, a RayJob's head and
workers) is reported on other manifests only for a claim the files declare whose name says the file system every run
of the cluster shares (`fsx`, `efs`, `nfs`, `lustre`, `filestore`, `azurefile`, `cephfs`; `shared` or `rwx` in a
name says no more than that the job's own pods share it): otherwise a download, training, evaluation or export job
writing its results where the project keeps them is the likelier reading, even where several of the project's jobs
mount the claim (on the labelled foreign corpora no such finding was a defect). Nor is a mount of such a claim that
holds what the container writes by its own configuration: its model download directory (the Hub cache its env or flags
set, an Ollama server's model store) or its `workingDir` (a notebook's workspace) or a user's home directory (its
`HOME`, `/home/<user>`, `/root`: an interactive pod's own files), or, for an init container, a volume a regular
container of the pod keeps such state on, or a directory its env names for what it writes (`OUTPUT_DIR`,
`CHECKPOINT_PATH`, `CHROMADB_PATH`, `LOG_DIR`): a server filling its own model cache, the init step that fills it, or a
program keeping its outputs or its database there writes there by design.

## Why is this bad?
The shared volume holds every model, dataset, checkpoint and evaluation result of every run. A utility pod that
sleeps with it mounted read-write, an evaluation job that runs model-written code, a server with a shell: one
wrong path, one `rm -rf "$DIR/"` with an empty variable, or one generated program, and every run's checkpoints
are gone. Each of them only ever writes a few directories of its own.

## Example
```yaml
containers:
  - name: utils
    command: ["sleep", "infinity"]
    volumeMounts:
      - {name: fsx, mountPath: /fsx}
```
Use instead:
```yaml
containers:
  - name: utils
    command: ["sleep", "infinity"]
    volumeMounts:
      - {name: fsx, mountPath: /fsx, readOnly: true}
      - {name: fsx, mountPath: /fsx/models/Qwen3-8B, subPath: models/Qwen3-8B}
```

## Fix
Mount the volume read-only and add a read-write subPath mount for each directory the pod writes.
"""


def check(ctx) -> Iterator[Hit]:
    claims = {c.name for c in ctx.of_kind("PersistentVolumeClaim")}
    single_node = {c.name for c in ctx.of_kind("PersistentVolumeClaim") if _one_pods_disk(c.obj.get("spec"))}
    templates = Counter(claim for _o, _p, pod in ctx.pod_templates() for claim in set(_claims_of(pod)))
    config_maps = config_map_data(ctx)
    for o, pod_path, pod in ctx.pod_templates():
        if o.kind == "RayCluster":
            continue  # GRPO814
        shared: dict[str, bool] = {}  # volume name -> known to be shared (else assumed)
        # A job's own output volume (a download, training or export job writes its results there) is the likelier
        # reading of a claim these files do not show: only a claim known to be shared is judged on such pods.
        # A RayJob's cluster exists for its one job, a training or batch run, as a Job's pod does.
        finite = not ctx.has_values and (runs_to_completion(o, pod_path, pod)
                                         or (o.kind == "RayJob" and is_ray_pod(o, pod_path)))
        for _, v, claim in claim_volumes(pod):
            if not v["persistentVolumeClaim"].get("readOnly") and claim not in single_node:
                known = claim in claims or ctx.has_values  # the chart's claim is the FSx volume
                if ctx.has_values or (not finite and _shown_shared(claim, templates, o, pod_path, known)) or (
                        finite and known and _shared_beyond_job(claim)):
                    shared[v.get("name")] = known
        # each container's own state mounts, once; a volume a regular container keeps its state on is filled by
        # an init container that writes it
        own_by = {(field, i): _own_state_mounts(c, known_env(c, config_maps)) for field, i, c in all_containers(pod)} \
            if not all(shared.values()) else {}
        filled = {c["volumeMounts"][j].get("name") for field, i, c in all_containers(pod) if field == "containers"
                  for j in own_by.get((field, i), ())}
        for field, i, c in all_containers(pod):
            own = own_by.get((field, i), set())
            for j, m in enumerate(c.get("volumeMounts") or []):
                if isinstance(m, dict) and m.get("name") in shared and not m.get("readOnly") and not m.get("subPath"):
                    known = shared[m["name"]]
                    # a claim not shown shared, holding its own download cache or workspace (or the server's,
                    # which an init container fills)
                    if not known and (j in own or (field == "initContainers" and m["name"] in filled)):
                        continue
                    if ctx.has_values:
                        assumed = ""
                    elif known:
                        assumed = (" (assumed: the volume holds more than this workload writes, other runs' or other "
                                   "teams' data, as several pods or a shared file system's name suggest)")
                    else:
                        assumed = (" (assumed shared: its claim is not in these files, but several pods or a shared "
                                   "file system's name say so)")
                    yield Hit(f"{where(pod_path, field, i)}.volumeMounts.{j}",
                              f"{pod_label(o, pod_path)}: container {c.get('name', i)} mounts the whole shared "
                              f"volume {m['name']} read-write at {m.get('mountPath')}{assumed}", obj=o,
                              severity=None if ctx.has_values else Severity.WARNING)


# Words a claim's name uses for a file system many pods mount at once.
SHARED_FS_WORDS = frozenset({"fsx", "efs", "nfs", "lustre", "filestore", "azurefile", "cephfs", "shared", "rwx"})


def _claims_of(pod: dict) -> list[str]:
    return [claim for _, _, claim in claim_volumes(pod)]


def _shared_beyond_job(claim: str) -> bool:
    """A claim a finite job's pods mount is where the job keeps its data and writes its results (a training job's
    replicas, the project's jobs one after another, share it by design) unless its name says the file system every
    run of the cluster shares (`fsx`, `efs`, `nfs`, `lustre`...)."""
    return bool((SHARED_FS_WORDS - MODE_WORDS) & _name_words(claim))


# Words that say a claim is mounted by many pods, which a training job's own replicas are: unlike a file system's
# name (fsx, efs), they say nothing of other workloads.
MODE_WORDS = frozenset({"shared", "rwx"})


def _shown_shared(claim: str, templates: Counter, o, pod_path: str, declared: bool) -> bool:
    """Evidence that a claim is shared beyond this workload: several pod templates mount it, its name says a shared
    file system (`fsx-models`, `efs-pvc`), or, for a claim these files do not declare, the workload runs several
    pods. A claim the files declare for one workload alone holds what its replicas write (an upload store, a
    server's data shared by its replicas by design). Without any, the likelier reading is the workload's own disk
    (a UI's database, a server's cache, a predictor's models)."""
    if templates[claim] > 1 or o.kind == "DaemonSet":
        return True
    owner = replica_spec(o, pod_path)
    counts = [owner.get(k) for k in ("replicas", "parallelism", "maxReplicas")] if owner else []
    if not declared and any(isinstance(n, int) and n > 1 for n in counts):
        return True
    return bool(SHARED_FS_WORDS & _name_words(claim))


def _name_words(claim: str) -> set[str]:
    return set(re.split(r"[^a-z0-9]+", claim.lower()))


# Env names a program writes under by its own configuration: its outputs, checkpoints, logs, databases, stores.
WRITTEN_ENV = re.compile(r"(OUTPUT|CHECKPOINT|CKPT|SAVE|RESULT|LOG|DB|DATABASE|PERSIST|STORE)S?(_?(DIR|PATH|ROOT|"
                         r"HOME|FOLDER|LOCATION))?$")


# The model a server or trainer loads, given as a local path (`vllm serve /data/$MODEL`, `--model-path /models/x`).
MODEL_PATH_ARG = re.compile(r"(?:--model(?:-path|-id|-dir|_name_or_path|_path)?|\bserve)(?:=|\s+)['\"]?(/[^\s'\"]+)")


def _own_state_mounts(c: dict, env: dict[str, str]) -> set[int]:
    """Indices of the container's mounts that hold what it writes by its own configuration: its model download
    directories, its working directory, a directory its env (`known_env`: literal, or from a ConfigMap of the set)
    names for what it writes (`OUTPUT_DIR`, `CHROMADB_PATH`), and the model store it loads its model from by path
    (a server's models, kept there by the project's own download step)."""
    work = mount_index(c, str(c["workingDir"])) if c.get("workingDir") else None
    written = {mount_index(c, value) for name, value in env.items()
               if value.startswith("/") and WRITTEN_ENV.search(name.upper())}
    # a mount at a user's home directory (its HOME, /home/<user>, /root) holds that user's own files
    written |= {j for j, m in enumerate(c.get("volumeMounts") or []) if isinstance(m, dict)
                and _home_directory(str(m.get("mountPath") or ""), env.get("HOME"))}
    models = {mount_index(c, m.group(1)) for m in MODEL_PATH_ARG.finditer(" ".join(argv_of(c)))}
    return download_mounts(c) | ({work} if work is not None else set()) | ((written | models) - {None})


def _home_directory(path: str, home: str | None) -> bool:
    path = path.rstrip("/")
    return bool(path) and (path == (home or "").rstrip("/") or path == "/root" or HOME_DIR.match(path) is not None)


HOME_DIR = re.compile(r"^/home/[^/]+$")


def _one_pods_disk(spec) -> bool:
    modes = spec.get("accessModes") if isinstance(spec, dict) else None
    return (isinstance(modes, list) and bool(modes)
            and all(m in ("ReadWriteOnce", "ReadWriteOncePod") for m in modes))
