"""GRPO626 weights-on-ephemeral-disk."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ...catalog.models import MODELS
from ..finding import Hit, Severity
from ..shell import config_map_data
from ._accelerators import asked as accelerators_asked
from ._cache_paths import CACHE_ENV, HOME_HUB_CACHE, cache_dir, downloads, known_env, mount_at
from ._hub import Pull, hub_repo
from ._objects import containers
from ._quantity import quantity
from ._runtime_env import serve_llm_models

CODE = "GRPO626"
NAME = "weights-on-ephemeral-disk"
SEVERITY = Severity.WARNING
CATEGORY = "correctness"
SUMMARY = ("A container downloads model weights into its writable layer or an emptyDir with no ephemeral-storage "
           "request or size limit that holds them.")
DOC = """## What it does
For every container that pulls a model from the Hugging Face Hub when it starts (a server's `--model ORG/NAME`,
`vllm serve ORG/NAME`, a server image's entrypoint given `ORG/NAME` as its first argument, TGI's `MODEL_ID`, `hf
download`, `snapshot_download` / `from_pretrained`, in its command, args, env or `sh -c` script), and every Ollama
server whose pod pulls a model when it starts (`ollama pull` / `ollama run` in a command or a postStart hook, a
sidecar's `curl .../api/pull`: the models land in `OLLAMA_MODELS`, else `$HOME/.ollama/models`), every llama.cpp
server that downloads its GGUF file from the Hub when it starts (`-hf` / `--hf-repo`, `LLAMA_ARG_HF_REPO`: the file
lands in `LLAMA_CACHE`, else `XDG_CACHE_HOME/llama.cpp`, else `$HOME/.cache/llama.cpp`), and every
accelerator container of a RayService's worker groups whose Ray Serve LLM configs load a model from the Hub
(`model_loading_config.model_source` in `serveConfigV2`: each replica downloads it into its worker's Hub cache; a
mount at a home's `.cache/huggingface` is taken as that cache, whatever the image's `HOME`), finds where the
download lands: `--download-dir` / `--local-dir` / `local_dir=` (a path, or a variable the snippet sets to one),
else `HF_HUB_CACHE` / `HUGGINGFACE_HUB_CACHE` / `TRANSFORMERS_CACHE`, else `HF_HOME/hub`, else
`XDG_CACHE_HOME/huggingface/hub`, else `$HOME/.cache/huggingface/hub` (`/root` unless `HOME` is set; TGI's image
sets `HF_HOME=/data`); a Kubeflow Trainer initializer's `STORAGE_URI=hf://...` lands in `/workspace`. Then reads the
volume mounted at that path:

- no volume: the weights go into the container's writable layer, on the node's disk;
- an `emptyDir` (on disk) without `sizeLimit`: the same disk, without a bound.

Either is reported unless the container states `ephemeral-storage` (request or limit) that holds the weights. An
emptyDir whose `sizeLimit` holds them, in a container that requests no `ephemeral-storage`, is reported too: the
limit only evicts the pod past it, and the scheduler counts container requests, not `sizeLimit`s, when it picks a
node. Where the catalogue knows the model's size (parameters x 2 bytes for bf16), a `sizeLimit` or
`ephemeral-storage` smaller than the weights is an error (the eviction is certain); no room stated at all is a
warning that names the size where it is known. Weights under 4 GB (under 2B parameters, by the catalogue or by the
count the model's name states, `Qwen2.5-0.5B`, `opt-125m`, unless the name says it is quantized) are reported only
where a stated room is smaller: no node's disk notices them. A container with an accelerator whose env names the Hub
cache (`HF_HUB_CACHE`, `HUGGINGFACE_HUB_CACHE`, `TRANSFORMERS_CACHE`, `HF_HOME`) on a disk emptyDir with no
`sizeLimit`, and that states no `ephemeral-storage`, is reported even where no pull is in the files (a Ray worker
group caching the model of the jobs submitted to it): a warning naming the assumption that its program downloads the
model from the Hub. An accelerator pod that sizes a disk emptyDir at 10 GiB or more (`sizeLimit`, half the root
volume an EKS managed node group gets by default) while no container states `ephemeral-storage` is reported as well,
whatever fills it (an init container's `aws s3 sync`, a trainer's checkpoints): a warning naming the assumption that
it writes near its limit. A PersistentVolumeClaim, `hostPath`, CSI, NFS or any other persistent volume at the cache path
is fine, and so is a local model path (no pull) or a memory-backed emptyDir (it counts against the memory limit, not
the node's disk).

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

BYTES_PER_PARAM = 2  # bf16 / fp16 checkpoints


def _stated_storage(c: dict) -> float | None:
    res = c.get("resources") if isinstance(c.get("resources"), dict) else {}
    stated = [quantity(part.get("ephemeral-storage")) for part in (res.get("requests"), res.get("limits"))
              if isinstance(part, dict) and "ephemeral-storage" in part]
    stated = [s for s in stated if s is not None]
    return min(stated) if stated else None


# A model whose 16-bit weights are under this is no disk-pressure risk worth a request on any node that runs pods
# (reviewers of two labelled corpora read a 0.5B-1B model in the writable layer as fine): under 2B parameters.
SMALL_WEIGHTS = 4e9
# A parameter count in a model's name (`Qwen2.5-0.5B-Instruct`, `opt-125m`, `Llama-3.2-1B`): one `-`/`_`-separated
# word of digits and a unit.
NAMED_SIZE = re.compile(r"(\d+(?:\.\d+)?)([bBmM])")
QUANTIZED = re.compile(r"awq|gptq|gguf|ggml|exl2|int4|int8|fp8|fp4|nvfp4|[48]-?bit|bnb|q[2-8]_", re.IGNORECASE)


def weight_bytes(repo: str) -> float | None:
    for m in MODELS.values():
        if m.hf_id.lower() == repo.lower():
            return m.parameters * BYTES_PER_PARAM
    return None


def named_weight_bytes(repo: str) -> float | None:
    """16-bit weights from the largest parameter count the model's name states; None for a quantized build (its
    files are a fraction of that) or a name that states none."""
    name = repo.rsplit("/", 1)[-1]
    if QUANTIZED.search(name):
        return None
    counts = [float(m.group(1)) * (1e9 if m.group(2) in "bB" else 1e6)
              for word in re.split(r"[-_]", name) for m in [NAMED_SIZE.fullmatch(word)] if m]
    return max(counts) * BYTES_PER_PARAM if counts else None


def _gb(n: float) -> str:
    return f"{n / 1e9:.0f} GB"


def check(ctx) -> Iterator[Hit]:
    config_maps = config_map_data(ctx)
    for o, pod_path, pod in ctx.pod_templates():
        volumes = {v.get("name"): v for v in pod.get("volumes") or [] if isinstance(v, dict)}
        pulling = set()
        for base, c, pulls, cache, _env in downloads(pod, pod_path, with_ollama=True, config_maps=config_maps):
            pulling.add(base)
            yield from _judge(o, base, c, pulls, cache, volumes)
        for base, c, pulls, cache in _serve_replica_downloads(o, pod_path, pod, config_maps):
            if base not in pulling:
                pulling.add(base)
                yield from _judge(o, base, c, pulls, cache, volumes)
        hits = []
        for field, i, c in containers(pod):
            base = f"{pod_path}.{field}.{i}"
            if base not in pulling:
                hits += _declared_cache(o, base, c, known_env(c, config_maps), volumes)
        yield from hits
        if not pulling and not hits:
            yield from _sized_scratch(o, pod_path, pod)


def _serve_replica_downloads(o, pod_path: str, pod: dict, config_maps: dict) -> Iterator[tuple]:
    """A RayService whose Ray Serve LLM configs load models from the Hub: each accelerator container of its worker
    groups runs replicas, and each replica downloads the model into its node's Hub cache (huggingface_hub's, from
    the container's env; a mount at a home's `.cache/huggingface` is that cache whatever the image's HOME)."""
    if o.kind != "RayService" or ".workerGroupSpecs." not in f".{pod_path}.":
        return
    pulls = [Pull(source, "Ray Serve LLM model_source", revision) for source, revision in serve_llm_models(o)
             if hub_repo(source)]
    if not pulls:
        return
    for field, i, c in containers(pod):
        if not accelerators_asked(c):
            continue
        env = known_env(c, config_maps)
        homes = [m.get("mountPath") for m in c.get("volumeMounts") or [] if isinstance(m, dict)
                 and HOME_HUB_CACHE.match(str(m.get("mountPath") or ""))]
        cache = cache_dir(c, [], {"HOME": "$HOME", **env}) if not homes else homes[0]
        yield f"{pod_path}.{field}.{i}", c, pulls, cache


# An accelerator pod whose disk emptyDirs may hold this much writes a model or checkpoints there: half the root
# volume an EKS managed node group gets by default (20 GiB, `diskSize`), a quarter of GKE's default boot disk.
SIZED_SCRATCH = 10 * 2**30


def _sized_scratch(o, pod_path: str, pod: dict) -> Iterator[Hit]:
    """An accelerator pod that bounds a disk emptyDir at SIZED_SCRATCH or more, where no container states
    ephemeral-storage: the sizeLimit says how much it will write; the scheduler reserves none of it."""
    all_containers = [c for _f, _i, c in containers(pod)]
    gpus = next((g for g in map(accelerators_asked, all_containers) if g), None)
    if not gpus or any(_stated_storage(c) is not None for c in all_containers):
        return
    sized = [(i, v, quantity((v.get("emptyDir") or {}).get("sizeLimit")))
             for i, v in enumerate(pod.get("volumes") or []) if isinstance(v, dict)
             and isinstance(v.get("emptyDir"), dict) and v["emptyDir"].get("medium") != "Memory"]
    sized = [(i, v, size) for i, v, size in sized if size is not None and size >= SIZED_SCRATCH]
    if not sized:
        return
    i, volume, size = max(sized, key=lambda x: x[2])
    resource, count = next(iter(gpus.items()))
    yield Hit(f"{pod_path}.volumes.{i}.emptyDir.sizeLimit",
              f"{o.kind} {o.name}: a pod with {count:g} {resource} sizes the emptyDir {volume.get('name')} on the "
              f"node's disk at {volume['emptyDir']['sizeLimit']}, but no container requests ephemeral-storage: "
              "the scheduler counts requests, not sizeLimits, so it may place the pod on a node with less free "
              "disk, which evicts it (DiskPressure) once what it writes there (a model, checkpoints) fills the disk "
              "(assumed: it writes near its sizeLimit)", obj=o)


def _declared_cache(o, base: str, c: dict, env: dict[str, str], volumes: dict) -> Iterator[Hit]:
    """An accelerator container whose env points the Hub cache at a disk emptyDir that nothing bounds, while no
    pull is in these files: the variable says where the model its program loads will land."""
    gpus = accelerators_asked(c)
    var = next((v for v in (*CACHE_ENV, "HF_HOME") if env.get(v)), None)
    if not gpus or var is None or _stated_storage(c) is not None:
        return
    mount = mount_at(c, env[var])
    volume = volumes.get(mount.get("name")) if mount else None
    empty = (volume or {}).get("emptyDir")
    if empty is None or (isinstance(empty, dict) and (empty.get("medium") == "Memory" or empty.get("sizeLimit"))):
        return
    name, (resource, count) = c.get("name", base.rsplit(".", 1)[-1]), next(iter(gpus.items()))
    yield Hit(f"{base}.volumeMounts", f"{o.kind} {o.name}: container {name} ({count:g} {resource}) sets {var}="
              f"{env[var]}, the emptyDir {mount.get('name')}, with no sizeLimit and no ephemeral-storage request: the "
              "weights its program downloads land on the node's disk, a node whose disk fills evicts the pod "
              "(DiskPressure), and each new pod downloads them again (assumed: the model comes from the Hub; the "
              "pull is not in these files)", obj=o)


def _judge(o, base: str, c: dict, pulls: list[Pull], cache: str, volumes: dict) -> Iterator[Hit]:
    mount = mount_at(c, cache)
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
    small = [b for b in (need, *(named_weight_bytes(p.repo) for p in pulls)) if b is not None]
    if small and max(small) < SMALL_WEIGHTS and not (rooms and need is not None and min(rooms) < need):
        return
    held = bool(rooms) and (need is None or min(rooms) >= need)
    if held and stated is not None:
        return
    where = (f"the emptyDir {mount.get('name')} at {mount.get('mountPath')}" if volume is not None
             else "the container's writable layer")
    name = c.get("name", base.rsplit(".", 1)[-1])
    how = pull.how.split()[-1] if pull.how.startswith("-") else pull.how  # args only: no program word
    head = f"{o.kind} {o.name}: container {name} downloads {pull.repo} ({how}) to {cache}, in {where}"
    if held:  # a sizeLimit bounds the volume; only a request tells the scheduler the pod needs that disk
        yield Hit(f"{base}.resources", f"{head}, whose sizeLimit allows {_gb(size_limit)}, but requests no "
                  "ephemeral-storage: the scheduler counts requests, not sizeLimits, so it may place the pod on a "
                  "node with less free disk, which evicts it (DiskPressure) part-way through the download", obj=o)
        return
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
