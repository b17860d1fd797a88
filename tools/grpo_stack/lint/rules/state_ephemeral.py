"""GRPO860 state-on-ephemeral-storage."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator

from ..finding import Hit, Severity
from ..shell import split_words
from ._hub import flag_value
from ._objects import argv_of, containers
from ._serving import is_notebook

CODE = "GRPO860"
NAME = "state-on-ephemeral-storage"
SEVERITY = Severity.WARNING
CATEGORY = "correctness"
SUMMARY = ("A training or batch job writes its checkpoints or outputs, or a notebook or a database its data, to the "
           "container's filesystem or an emptyDir.")
DOC = """## What it does
Reads the arguments of every container of a batch workload (a Job, CronJob, or any `*Job` custom resource: a
PyTorchJob, MPIJob, Volcano Job, JobSet, RayJob; or a bare Pod that does not restart) for the flags by which
training and evaluation scripts name where they keep their state: `--checkpoint*`, `--ckpt*`, a checkpoint's
directory, folder, path or root under a prefix (`--dist_checkpoint_root_folder`, but not a pretrained or initial
checkpoint to load), `--resume`, `--output-dir`/`--output_dir` (or folder), `--save-dir`, `--save-path`,
`--save-checkpoint` (`--save-ckpt`), Megatron's `--save`, `--results-dir`; and where a trained model or a run's
outputs go: `--output` (`--output-path`, `--output-prefix`), `--outdir`/`--out-dir`, `--save-model*`,
`--model-prefix`, `--model-output*`, `--export-dir`; and a verl command that saves checkpoints
(`trainer.save_freq` above 0) at `trainer.default_local_dir`, by default `checkpoints/<project>/<experiment>` under
the working directory; and a Hydra or OmegaConf override whose last key names such a directory
(`exp_manager.exp_dir=/results`, `trainer.default_root_dir=...`, `....checkpoint_dir`, `....output_dir`,
`....save_dir`, `....dirpath`) with an absolute path. A value is a path when it holds a `/` or starts with `.`
(`--output json` is a format, `/dev/stdout` a stream) and holds no `=`, `,` or `:` (BuildKit's
`--output type=image,name=...` names an image). Reported when that path is on no
volume the container mounts, or on an `emptyDir` (the pod's own scratch): a relative path lands in the image's
working directory unless `workingDir` is on a volume. Nothing is reported when the job copies its results to an
object store (`s3://`, `gs://`, `az://` in its arguments).

A notebook server (Jupyter, code-server, by its command) in a Deployment, StatefulSet or restarting Pod is
reported the same way when its notebook directory (`--notebook-dir`, `--ServerApp.root_dir`,
`--NotebookApp.notebook_dir`, else its `workingDir`) is on no volume or an `emptyDir`, or, where it names none,
when the container mounts nothing that outlives the pod (only `emptyDir`, ConfigMap, Secret or projected volumes,
or none): the warning names the assumption that the work is saved where the notebook opens, not pushed elsewhere.

A container of a Deployment, StatefulSet or Pod that listens on a database's or vector store's default port
(5432 PostgreSQL, 3306 MySQL, 27017 MongoDB, 6333 Qdrant, 19530 Milvus, 9200 Elasticsearch/OpenSearch) and
mounts nothing that outlives the pod is reported the same way, the assumption named: it keeps data meant to last
(a RAG index, conversation history, a tracking server's runs), not a cache. Redis is left alone: most are caches.

## Why is this bad?
The container's filesystem and an `emptyDir` end with the pod. A job restarted after a node failure, an eviction
or a preemption starts over from its first step, hours of GPU time lost; the results of one that finishes are
deleted with it.

## Example
```yaml
kind: PyTorchJob
  containers:
    - args: [train.py, --checkpoint-dir, /workspace/ckpt]     # no volume at /workspace
```
Use instead:
```yaml
    - args: [train.py, --checkpoint-dir, /fsx/runs/r1/ckpt]
      volumeMounts: [{name: fsx, mountPath: /fsx}]
```

## Fix
Mount persistent storage (a PersistentVolumeClaim: FSx, EFS, a disk) and point the flag into it, or copy the
results to an object store before the job ends.
"""

STATE_FLAG = re.compile(r"^--?(checkpoint[\w-]*|ckpt[\w-]*|(?![\w-]*(?:pretrained|load|init|base))"
                        r"[\w-]*(?:checkpoint|ckpt)[\w-]*(?:dir|folder|path|root)[\w-]*"
                        r"|resume(?:[-_]from[\w-]*)?|save[-_](?:dir|path|folder)"
                        r"|save(?:[-_](?:checkpoint|ckpt)[\w-]*)?"
                        # where a trained model or a run's outputs go: --output, --output-dir, --outdir,
                        # --save-model-dir, --model-prefix (MXNet's save prefix), --export-dir
                        r"|output(?:[-_]?(?:dir|folder|path|prefix|model[\w-]*))?|out[-_]?dir"
                        r"|save[-_]model[\w-]*|model[-_](?:prefix|output[\w-]*|out[-_]?dir|save[\w-]*)"
                        r"|export[-_](?:dir|path)"
                        r"|results?[-_](?:dir|folder))$", re.IGNORECASE)
# A file system path: no `=`, `,` or `:` (BuildKit's `--output type=image,name=REGISTRY/...` names an image, a
# `host:port/...` a registry or a URL).
PATH_LIKE = re.compile(r"^[\w./~+@-]+$")
# Paths that are not storage: the process's own streams and the kernel's files.
NOT_STORAGE = ("/dev/", "/proc/", "/sys/")
OBJECT_STORE = re.compile(r"\b(?:s3|gs|az|abfss?)://")


def _batch(o, pod: dict) -> bool:
    if o.kind in ("Job", "CronJob") or o.kind.endswith("Job") or o.kind == "JobSet":
        return True
    return o.kind == "Pod" and pod.get("restartPolicy") in ("Never", "OnFailure")


def _words(c: dict) -> list[str]:
    out = []
    for w in argv_of(c):
        try:
            out += split_words(w.replace("\\\n", " "))
        except ValueError:
            out += w.split()
    return out


# verl saves checkpoints every trainer.save_freq steps (-1: never) under trainer.default_local_dir, by default
# `checkpoints/${trainer.project_name}/${trainer.experiment_name}`, relative to the working directory (verl 0.9.1
# trainer/config/ppo_trainer.yaml L174, L217).
VERL_SAVE_FREQ = re.compile(r"^\+{0,2}trainer\.save_freq=(-?\d+)$")
VERL_SAVE_DIR = re.compile(r"^\+{0,2}trainer\.default_local_dir=(.+)$")
VERL_DEFAULT_DIR = "checkpoints/<project>/<experiment>"


def _verl_checkpoints(words: list[str]) -> tuple[str, str] | None:
    """(key, directory) where a verl command saves checkpoints, when it saves any."""
    freq = next((int(m.group(1)) for w in words if (m := VERL_SAVE_FREQ.match(w))), -1)
    if freq <= 0:
        return None
    given = next((m.group(1).strip("'\"") for w in words if (m := VERL_SAVE_DIR.match(w))), None)
    if given is None:
        return "trainer.default_local_dir (verl's default)", VERL_DEFAULT_DIR
    return "trainer.default_local_dir", given


# A Hydra / OmegaConf override (`exp_manager.exp_dir=/results`, `trainer.default_root_dir=/ckpt`,
# `callbacks.checkpoint.dirpath=...`) whose last key names where a run keeps its checkpoints or outputs.
STATE_KEY = re.compile(r"^\+{0,2}(?:[A-Za-z_][\w-]*\.)+(checkpoint_dir|checkpoint_path|ckpt_dir|ckpt_path|save_dir|"
                       r"save_path|output_dir|out_dir|exp_dir|default_root_dir|results_dir|dirpath)$")


def _state_paths(words: list[str]) -> Iterator[tuple[str, str]]:
    verl = _verl_checkpoints(words)
    if verl and not verl[1].startswith(("$", *NOT_STORAGE)):
        yield verl
    for i, w in enumerate(words):
        flag, eq, value = w.partition("=")
        if eq and STATE_KEY.match(flag) and flag != (verl or ("",))[0]:
            value = value.strip("'\"")
            if value.startswith("/") and not value.startswith(NOT_STORAGE) and PATH_LIKE.match(value):
                yield flag.lstrip("+"), value
            continue
        if not STATE_FLAG.match(flag):
            continue
        value = value if eq else (words[i + 1] if i + 1 < len(words) else "")
        if (value and not value.startswith(("-", "$", *NOT_STORAGE)) and PATH_LIKE.match(value)
                and ("/" in value or value.startswith(".") or value == ".")):
            yield flag, value


def _volume_at(path: str, c: dict, volumes: dict) -> dict | None:
    best = None
    for m in c.get("volumeMounts") or []:
        if not isinstance(m, dict):
            continue
        mount = str(m.get("mountPath", "")).rstrip("/") or "/"
        if path == mount or path.startswith(mount + "/") or mount == "/":
            if best is None or len(mount) > len(best[0]):
                best = (mount, volumes.get(m.get("name")) or {})
    return best[1] if best else None


# Where Jupyter keeps the notebooks it opens and saves (jupyter_server's `root_dir`, the classic notebook's
# `notebook_dir`, both also as `--notebook-dir`).
NOTEBOOK_DIR = ("--notebook-dir", "--ServerApp.root_dir", "--NotebookApp.notebook_dir")
# Volumes that end with the pod or hold no data the pod writes.
NOT_KEPT = frozenset({"emptyDir", "configMap", "secret", "projected", "downwardAPI", "ephemeral", "image"})


def _outlives_pod(mount: dict, volumes: dict) -> bool:
    """A mount of a volume that outlives the pod: a claim, a host path, ...; a mount of no volume the pod declares
    is a StatefulSet's volumeClaimTemplates claim, kept too. A volume that names no source is an emptyDir (the API
    server's default)."""
    name = mount.get("name")
    if name not in volumes:
        return True
    sources = set(volumes[name]) - {"name"}
    return bool(sources) and not NOT_KEPT & sources


def _notebook_hit(o, path: str, c: dict, volumes: dict) -> Hit | None:
    """A notebook server whose notebooks land where nothing keeps them: its notebook directory (by flag or
    workingDir) on no volume or an emptyDir; where it names none, a container that mounts nothing that lasts."""
    given = flag_value(_words(c), NOTEBOOK_DIR) or c.get("workingDir")
    name = c.get("name", path.rsplit(".", 1)[-1])
    if given:
        volume = _volume_at(str(given).strip("'\""), c, volumes)
        if volume is not None and "emptyDir" not in volume:
            return None
        on = "an emptyDir" if volume is not None else "the container filesystem"
        where = f"its notebook directory {given}, on {on}"
    else:
        kept = [m for m in c.get("volumeMounts") or [] if isinstance(m, dict) and _outlives_pod(m, volumes)]
        if kept:
            return None
        where = "the image's working directory: the container mounts no volume that outlives the pod"
    return Hit(path, f"{o.kind} {o.name}: notebook server {name} keeps the notebooks and results written in it in "
               f"{where}: a restart, an eviction or a rollout deletes them (assumed: work is saved in the notebook's "
               "directory, not pushed elsewhere)", obj=o)


# The ports a database or vector store listens on by default: what it serves is data it keeps.
DATABASE_PORTS = {5432: "PostgreSQL", 3306: "MySQL", 27017: "MongoDB", 6333: "Qdrant", 19530: "Milvus",
                  9200: "Elasticsearch or OpenSearch"}
SERVING = ("Deployment", "StatefulSet", "ReplicaSet", "Pod")


def _database_hit(o, path: str, c: dict, volumes: dict) -> Hit | None:
    """A container that listens on a database's port and mounts nothing that outlives the pod: the data it is
    sent lives in its writable layer (or an emptyDir) and goes with the pod."""
    ports = {p.get("containerPort") for p in c.get("ports") or [] if isinstance(p, dict)}
    served = next((DATABASE_PORTS[p] for p in sorted(ports, key=str) if p in DATABASE_PORTS), None)
    kept = [m for m in c.get("volumeMounts") or [] if isinstance(m, dict) and _outlives_pod(m, volumes)]
    if served is None or kept:
        return None
    return Hit(path, f"{o.kind} {o.name}: container {c.get('name', path.rsplit('.', 1)[-1])} serves {served}'s port "
               "and mounts no volume that outlives the pod: what it stores is in its writable layer or an emptyDir, "
               "and a restart, an eviction or a rollout deletes it (assumed: it keeps data meant to last, not a "
               "cache or a test fixture)", obj=o)


def check(ctx) -> Iterator[Hit]:
    for o, pod_path, pod in ctx.pod_templates():
        if not _batch(o, pod):
            volumes = {v.get("name"): v for v in pod.get("volumes") or [] if isinstance(v, dict)}
            for field, i, c in containers(pod):
                if field == "containers" and is_notebook(c):
                    hit = _notebook_hit(o, f"{pod_path}.{field}.{i}", c, volumes)
                    if hit:
                        yield hit
                elif field == "containers" and o.kind in SERVING:
                    hit = _database_hit(o, f"{pod_path}.{field}.{i}", c, volumes)
                    if hit:
                        yield hit
            continue
        volumes = {v.get("name"): v for v in pod.get("volumes") or [] if isinstance(v, dict)}
        for field, i, c in containers(pod):
            if field != "containers":
                continue
            words = _words(c)
            if any(OBJECT_STORE.search(w) for w in words):
                continue
            for flag, value in _state_paths(words):
                path = value if value.startswith("/") else posixpath.normpath(
                    posixpath.join(str(c.get("workingDir") or "/<image workdir>"), value))
                volume = _volume_at(path, c, volumes)
                if volume is not None and "emptyDir" not in volume:
                    continue
                where = "an emptyDir (the pod's scratch)" if volume is not None else "the container's filesystem"
                yield Hit(f"{pod_path}.{field}.{i}", f"{o.kind} {o.name}: container {c.get('name', i)} keeps its state "
                          f"at {value} ({flag}), on {where}: a restart or the job's end loses it", obj=o)
                break
