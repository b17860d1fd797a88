"""GRPO617 dev-shm-too-small."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity
from ._objects import containers, values_section
from ._one_shot import inspects_only, training_launcher
from ._quantity import quantity
from ._serving import is_model_server, one_process_server
from ._vllm import single_worker

CODE = "GRPO617"
NAME = "dev-shm-too-small"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "A multi-GPU container has no memory-backed /dev/shm, or one no larger than the runtime's 64 MiB default."
DOC = """## What it does
For every container given two or more `nvidia.com/gpu` (NCCL between the pod's GPUs; vLLM's and SGLang's
tensor-parallel workers), in every pod template (RayCluster groups, vLLM Deployments, Jobs, custom resources):
a volume of `emptyDir: {medium: Memory}` must be mounted at `/dev/shm`. Missing is an error, and so is a
`sizeLimit` of 64 MiB or less (the container runtime's default it is there to replace); below a quarter GiB per
GPU, up to 2 GiB, is a warning (1 GiB for a 4-GPU container, 2 GiB from 8). In values the same is read from the
rendered chart and reported at `raycluster.worker.shmSize`.
The node's own `/dev/shm` mounted there (`hostPath: {path: /dev/shm}`) is memory-backed too and not reported
here (GRPO847 reports the sharing), nor is a pod with `hostIPC: true`, whose containers the runtime gives
the node's `/dev/shm` (containerd's CRI mounts it for a pod on the host's IPC namespace). The Ray container of
a RayCluster, RayJob or RayService group with no `/dev/shm` mount of its own is not reported: KubeRay adds one
(`emptyDir: {medium: Memory}`, sized to the container's memory limit).
Not judged: a container whose stated command runs only tools that start no GPU peers (`nvidia-smi`, `sleep`,
CUDA's `deviceQuery` or `vectorAdd`, `echo`: a smoke test holding GPUs), and a vLLM server on one node whose
stated tensor x pipeline x data parallel product is 1 (it drives one GPU; GRPO904 reports the idle ones), nor an
Ollama or llama.cpp server (`llama-server`, `python -m llama_cpp.server`), which splits a model over its GPUs from
one process, with no NCCL between them.
On manifests not rendered from values, a missing /dev/shm is an error where the container's stated command runs a
distributed launcher (`torchrun`, `deepspeed`, `accelerate launch`, `mpirun`...) or a model server; for any other
program (a project's own script, an image's entrypoint) it is a warning naming the assumption that the program
starts GPU peers or data-loader workers.

## Why is this bad?
Kubernetes has no `--shm-size`: a container's `/dev/shm` is the runtime's 64 MiB tmpfs unless a memory
emptyDir is mounted there. NCCL's intra-node shared-memory transport and PyTorch's inter-process tensors live
in it; at 64 MiB NCCL initialisation dies in `ncclShmOpen` (Bus error / segfault) or a collective fails hours
in. 2 GiB is what PyTorch's own CI needed for NCCL initialisation across a node's eight GPUs (pytorch/tutorials
0ba3e39), and NCCL's shared-memory buffers are per pair of local peers, so fewer GPUs need less: text-generation-
inference documents its sharded servers on `--shm-size 1g`. The floor is scaled by the GPU count from PyTorch's
eight-GPU figure [inferred from the two]: a floor, not a sizing: a worker's rollout engine and dataloaders want more.

## Example
```yaml
containers:
  - name: worker
    resources: {limits: {nvidia.com/gpu: 8}}
```
Use instead:
```yaml
containers:
  - name: worker
    resources: {limits: {nvidia.com/gpu: 8}}
    volumeMounts: [{name: dshm, mountPath: /dev/shm}]
volumes:
  - name: dshm
    emptyDir: {medium: Memory, sizeLimit: 256Gi}
```

## Fix
Mount `emptyDir: {medium: Memory}` at `/dev/shm` (the grpo-stack chart does: `raycluster.worker.shmSize`);
size it well above 2 GiB for a GPU worker (memory it uses counts against the container's memory limit).
"""

RAY_KINDS = frozenset({"RayCluster", "RayJob", "RayService"})
DEFAULT_SHM = 64 * 2**20  # the container runtime's /dev/shm
FLOOR = 2 * 2**30  # pytorch/tutorials 0ba3e39: NCCL init across eight GPUs needed a 2 GiB /dev/shm
FLOOR_GPUS = 8


def floor(gpus: float) -> float:
    """The warning floor for a container with `gpus` GPUs: PyTorch's eight-GPU figure scaled per GPU, at most it."""
    return min(FLOOR, FLOOR * gpus / FLOOR_GPUS)


def _gpus(c: dict) -> float:
    res = c.get("resources") if isinstance(c.get("resources"), dict) else {}
    values = [quantity((res.get(p) or {}).get("nvidia.com/gpu")) for p in ("limits", "requests")
              if isinstance(res.get(p), dict)]
    return max([v for v in values if v is not None], default=0)


def check(ctx) -> Iterator[Hit]:
    for o, pod_path, pod in ctx.pod_templates():
        if pod.get("hostIPC") is True:
            continue  # the runtime mounts the node's /dev/shm in a pod on the host's IPC namespace (containerd CRI)
        volumes = {v.get("name"): v for v in pod.get("volumes") or [] if isinstance(v, dict)}
        for field, i, c in containers(pod):
            gpus = _gpus(c)
            if gpus < 2 or inspects_only(c) or single_worker(c) or one_process_server(c):
                continue
            mount = next((m for m in c.get("volumeMounts") or [] if isinstance(m, dict)
                          and str(m.get("mountPath", "")).rstrip("/") == "/dev/shm"), None)
            volume = volumes.get(mount.get("name")) if mount else None
            empty = volume.get("emptyDir") if isinstance(volume, dict) else None
            where = f"{pod_path}.{field}.{i}"
            name = c.get("name", i)
            section = values_section(ctx, o, pod_path)
            key = f"{section}.shmSize" if section == "raycluster.worker" else where
            at = None if key != where else o  # a values key, or a place in the object
            host = volume.get("hostPath") if isinstance(volume, dict) else None
            if isinstance(host, dict) and str(host.get("path", "")).rstrip("/") == "/dev/shm":
                continue  # the node's own /dev/shm: a tmpfs as large as the node allows (GRPO847 judges sharing it)
            if not isinstance(empty, dict) or empty.get("medium") != "Memory":
                if mount is None and field == "containers" and i == 0 and o.kind in RAY_KINDS:
                    continue  # KubeRay mounts a memory-backed /dev/shm on the Ray container (pod.go addEmptyDir)
                peers = ctx.has_values or training_launcher(c) or is_model_server(c)
                yield Hit(key, f"{o.kind} {o.name}: container {name} has {gpus:g} GPUs and no memory-backed /dev/shm "
                          "(the runtime's 64 MiB); NCCL and the engine's workers fail in it"
                          + ("" if peers else " (assumed: its program starts a process per GPU, NCCL between them, or "
                             "data-loader workers; one process driving its GPUs needs none of it)"), obj=at,
                          severity=None if peers else Severity.WARNING)
                continue
            size = quantity(empty.get("sizeLimit")) if empty.get("sizeLimit") is not None else None
            if size is not None and size <= DEFAULT_SHM:
                yield Hit(key, f"{o.kind} {o.name}: /dev/shm of container {name} ({gpus:g} GPUs) is limited to "
                          f"{empty.get('sizeLimit')}, no more than the runtime's default 64 MiB", obj=at)
            elif size is not None and size < floor(gpus):
                yield Hit(key, f"{o.kind} {o.name}: /dev/shm of container {name} ({gpus:g} GPUs) is limited to "
                          f"{empty.get('sizeLimit')}, below the {floor(gpus) / 2**30:g} GiB NCCL initialisation "
                          f"needs across {gpus:g} GPUs (2 GiB for eight)", obj=at, severity=Severity.WARNING)
