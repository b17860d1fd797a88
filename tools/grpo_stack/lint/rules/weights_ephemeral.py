"""GRPO626 weights-on-ephemeral-disk."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator

from ...catalog.models import MODELS
from ..finding import Hit, Severity
from ..shell import command_name, command_words, commands_in, parse, script_in
from ._hub import Pull, argv_pulls, hub_repo, python_pulls, resolve, uri_pulls
from ._objects import containers
from ._quantity import quantity

CODE = "GRPO626"
NAME = "weights-on-ephemeral-disk"
SEVERITY = Severity.WARNING
CATEGORY = "correctness"
SUMMARY = ("A container downloads model weights into its writable layer or an emptyDir with no ephemeral-storage "
           "request or size limit that holds them.")
DOC = """## What it does
For every container that pulls a model from the Hugging Face Hub when it starts (a server's `--model ORG/NAME`,
`vllm serve ORG/NAME`, TGI's `MODEL_ID`, `hf download`, `snapshot_download` / `from_pretrained`, in its command,
args, env or `sh -c` script), finds where the download lands: `--download-dir` / `--local-dir` / `local_dir=`,
else `HF_HUB_CACHE` / `HUGGINGFACE_HUB_CACHE` / `TRANSFORMERS_CACHE`, else `HF_HOME/hub`, else
`XDG_CACHE_HOME/huggingface/hub`, else `$HOME/.cache/huggingface/hub` (`/root` unless `HOME` is set; TGI's
image sets `HF_HOME=/data`); a Kubeflow Trainer initializer's `STORAGE_URI=hf://...` lands in `/workspace`. Then
reads the volume mounted at that path:

- no volume: the weights go into the container's writable layer, on the node's disk;
- an `emptyDir` (on disk) without `sizeLimit`: the same disk, without a bound.

Either is reported unless the container states `ephemeral-storage` (request or limit), or the emptyDir has a
`sizeLimit`. Where the catalogue knows the model's size (parameters x 2 bytes for bf16), a `sizeLimit` or
`ephemeral-storage` smaller than the weights is an error (the eviction is certain); no room stated at all is a
warning that names the size where it is known. A PersistentVolumeClaim, `hostPath`, CSI, NFS or any other
persistent volume at the cache path is fine, and so is a local model path (no pull) or a memory-backed emptyDir
(it counts against the memory limit, not the node's disk).

## Why is this bad?
The writable layer and disk-backed emptyDirs share the node's ephemeral storage. A 16 GB (8B) or 145 GB (72B)
download on a node whose root disk is small fills it: the kubelet reports `DiskPressure` and evicts the pod
(`The node was low on resource: ephemeral-storage`), and it restarts only to download again. Without an
`ephemeral-storage` request the scheduler does not know the pod needs that disk and places it on any node; with
a `sizeLimit` or limit smaller than the weights the kubelet evicts it as soon as the download passes the limit.

## Example
```yaml
containers:
  - name: vllm
    args: [--model, Qwen/Qwen3-8B]
```
Use instead:
```yaml
containers:
  - name: vllm
    args: [--model, Qwen/Qwen3-8B]
    volumeMounts: [{name: hf-cache, mountPath: /root/.cache/huggingface}]
volumes:
  - {name: hf-cache, persistentVolumeClaim: {claimName: model-cache}}
```

## Fix
Mount a PersistentVolumeClaim (a shared filesystem: FSx for Lustre, EFS) at the cache path, or give the emptyDir
a `sizeLimit` and the container an `ephemeral-storage` request larger than the weights.
"""

CACHE_ENV = ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "TRANSFORMERS_CACHE")
DOWNLOAD_FLAGS = ("--download-dir", "--download_dir", "--local-dir", "--local_dir", "--cache-dir", "--cache_dir",
                  "--huggingface-hub-cache")
PY_TARGET = re.compile(r"\b(?:local_dir|cache_dir)\s*=\s*(['\"])(/[^'\"]+)\1")
MODEL_ENV = ("MODEL_ID", "HF_MODEL_ID")
TGI = ("text-generation-inference", "text-generation-launcher", "huggingface-pytorch-tgi")
# Kubeflow Trainer's model and dataset initializers download `STORAGE_URI` (hf://...) into /workspace/model and
# /workspace/dataset; an hf:// URI elsewhere names no download directory this rule can read.
INITIALIZER_DIR = "/workspace"
BYTES_PER_PARAM = 2  # bf16 / fp16 checkpoints


def _env(c: dict) -> dict[str, str]:
    items = c.get("env") if isinstance(c.get("env"), list) else []
    return {str(e["name"]): str(e["value"]) for e in items
            if isinstance(e, dict) and "name" in e and isinstance(e.get("value"), (str, int, float))}


def _tgi(c: dict, argv: list[str]) -> bool:
    image = str(c.get("image", ""))
    return any(t in image for t in TGI) or any(posixpath.basename(w) == "text-generation-launcher" for w in argv[:1])


def _pulls(c: dict, argv: list[str], env: dict[str, str]) -> list[Pull]:
    """Every hub pull the container makes at start, in the spellings `_hub` reads."""
    found: list[Pull] = []
    script = script_in(argv)
    if script is None:
        found += argv_pulls(argv, env)
        found += [p for word in argv for _off, p in python_pulls(word)]
    else:
        source = resolve(str(argv[script[0]]), env) if script[0] < len(argv) else ""
        for node in commands_in(parse(source).root_node):
            found += argv_pulls([command_name(node), *command_words(node)], env)
        found += [p for _off, p in python_pulls(source)]
    for var in MODEL_ENV:
        if env.get(var) and hub_repo(env[var]) and (var != "MODEL_ID" or _tgi(c, argv)):
            found.append(Pull(env[var], f"env {var}", None))
    return found


def _flag(argv: list[str], names: tuple[str, ...]) -> str | None:
    for i, w in enumerate(argv):
        head, eq, value = w.partition("=")
        if head in names:
            return value if eq else (argv[i + 1] if i + 1 < len(argv) else None)
    return None


def cache_dir(c: dict, argv: list[str], env: dict[str, str]) -> str:
    """Where the container's hub downloads land, as huggingface_hub and the servers resolve it."""
    flag = _flag(argv, DOWNLOAD_FLAGS)
    if flag:
        return resolve(flag, env)
    words = [w for w in argv if "=" in w]
    if script_in(argv) is not None:  # `sh -c 'hf download ... --local-dir /models'`
        words = [w for w in argv if " " in w]
        for w in words:
            for node in commands_in(parse(w).root_node):
                found = _flag(command_words(node), DOWNLOAD_FLAGS)
                if found:
                    return resolve(found, env)
    for w in words:
        m = PY_TARGET.search(w)
        if m:
            return m.group(2)
    for var in CACHE_ENV:
        if env.get(var):
            return env[var]
    if env.get("HF_HOME"):
        return posixpath.join(env["HF_HOME"], "hub")
    if _tgi(c, argv):
        return "/data/hub"  # TGI's image: ENV HF_HOME=/data
    if env.get("XDG_CACHE_HOME"):
        return posixpath.join(env["XDG_CACHE_HOME"], "huggingface", "hub")
    return posixpath.join(env.get("HOME", "/root"), ".cache", "huggingface", "hub")


def _mount_at(c: dict, path: str) -> dict | None:
    """The volumeMount that holds `path` (the deepest mountPath above it)."""
    best = None
    for m in c.get("volumeMounts") or []:
        mount = str((m or {}).get("mountPath", "")).rstrip("/") or "/" if isinstance(m, dict) else ""
        if mount and (path == mount or path.startswith(mount.rstrip("/") + "/")):
            if best is None or len(mount) > len(str(best.get("mountPath", "")).rstrip("/")):
                best = m
    return best


def _stated_storage(c: dict) -> float | None:
    res = c.get("resources") if isinstance(c.get("resources"), dict) else {}
    stated = [quantity(part.get("ephemeral-storage")) for part in (res.get("requests"), res.get("limits"))
              if isinstance(part, dict) and "ephemeral-storage" in part]
    stated = [s for s in stated if s is not None]
    return min(stated) if stated else None


def weight_bytes(repo: str) -> float | None:
    for m in MODELS.values():
        if m.hf_id.lower() == repo.lower():
            return m.parameters * BYTES_PER_PARAM
    return None


def _gb(n: float) -> str:
    return f"{n / 1e9:.0f} GB"


def check(ctx) -> Iterator[Hit]:
    for o, pod_path, pod in ctx.pod_templates():
        volumes = {v.get("name"): v for v in pod.get("volumes") or [] if isinstance(v, dict)}
        for field, i, c in containers(pod):
            env = _env(c)
            argv = [str(w) for w in (*(c.get("command") or []), *(c.get("args") or []))
                    if isinstance(w, (str, int, float))]
            base = f"{pod_path}.{field}.{i}"
            pulls = [p for p in _pulls(c, argv, env) if p.repo != "a repository" or p.how == "snapshot_download"]
            if pulls:
                yield from _judge(o, base, c, pulls, cache_dir(c, argv, env), volumes)
            initialized = list(uri_pulls(env.get("STORAGE_URI", "")))
            if initialized:
                yield from _judge(o, base, c, initialized, INITIALIZER_DIR, volumes)


def _judge(o, base: str, c: dict, pulls: list[Pull], cache: str, volumes: dict) -> Iterator[Hit]:
    mount = _mount_at(c, cache)
    volume = volumes.get(mount.get("name")) if mount else None
    if mount is not None and volume is None:
        return  # a volume the pod does not declare is the object schema's finding
    if volume is not None and "emptyDir" not in volume:
        return  # a claim, hostPath, CSI, NFS ... volume: not the node's ephemeral storage
    empty = (volume or {}).get("emptyDir") if isinstance((volume or {}).get("emptyDir"), dict) else {}
    if empty.get("medium") == "Memory":
        return  # counted against the memory limit, not the node disk
    size_limit = quantity(empty.get("sizeLimit")) if volume is not None else None
    stated = _stated_storage(c)
    rooms = [x for x in (size_limit, stated) if x is not None]
    known = [(p, b) for p, b in ((p, weight_bytes(p.repo)) for p in pulls) if b is not None]
    pull, need = max(known, key=lambda pb: pb[1]) if known else (pulls[0], None)
    if rooms and (need is None or min(rooms) >= need):
        return
    where = (f"the emptyDir {mount.get('name')} at {mount.get('mountPath')}" if volume is not None
             else "the container's writable layer")
    name = c.get("name", base.rsplit(".", 1)[-1])
    how = pull.how.split()[-1] if pull.how.startswith("-") else pull.how  # args only: no program word
    head = f"{o.kind} {o.name}: container {name} downloads {pull.repo} ({how}) to {cache}, in {where}"
    path = f"{base}.resources" if volume is None else f"{base}.volumeMounts"
    if rooms:
        yield Hit(path, f"{head}, with room for {_gb(min(rooms))} but the weights are about {_gb(need)}: the "
                  "kubelet evicts the pod part-way through the download", obj=o, severity=Severity.ERROR)
        return
    missing = "no ephemeral-storage request" if volume is None else "no sizeLimit and no ephemeral-storage request"
    if need is not None:
        yield Hit(path, f"{head}, with {missing} for about {_gb(need)} of weights: a node with less free disk "
                  "evicts the pod (DiskPressure), and the scheduler does not know it needs that disk", obj=o)
        return
    yield Hit(path, f"{head}, with {missing}: a node whose disk fills evicts the pod (DiskPressure), and the "
              "scheduler places it without knowing it needs that disk", obj=o)
