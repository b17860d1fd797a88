"""GRPO616 gpus-never-used."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..context import node_at
from ..finding import Hit, Severity
from ._objects import argv_of, containers

CODE = "GRPO616"
NAME = "gpus-never-used"
SEVERITY = Severity.ERROR
CATEGORY = "cost"
SUMMARY = "A pod is given GPUs that nothing in it can use (Ray told num-gpus below it, an idle or CPU-only container)."
DOC = """## What it does
Finds `nvidia.com/gpu` requests no engine will use, in every pod template:
- a Ray head or worker group whose `rayStartParams.num-gpus` is below the GPUs its Ray container gets: Ray
  schedules only what it advertises, so the rest sit unused;
- a container given GPUs that only idles (`sleep infinity`, `tail -f /dev/null`, `pause`): a warning, since a pod
  kept for `kubectl exec` sessions or a scheduling demonstration idles on purpose;
- a container given GPUs whose image has no glibc or no Python (`busybox`, `alpine`, `curlimages/curl`): no CUDA
  program runs there;
- a container given GPUs whose image has no CUDA of its own: a `rayproject/ray` tag without a `-gpu` / `-cuXXX`
  suffix (Ray's CPU images; an untagged platform on `rayproject/ray-ml` is its GPU image, `-cpu` its CPU one), or a
  plain glibc base (`python`, `debian`, `ubuntu`): a warning naming the assumption, since PyPI's torch, vLLM,
  JAX[cuda] and CuPy wheels carry the CUDA runtime and the NVIDIA container runtime mounts the driver. Not reported
  when the container's own command installs such wheels (`pip install torch==...`, `-r requirements.txt`), nor
  when it runs `nvidia-smi`, which the NVIDIA container runtime mounts from the driver into a glibc image: a GPU
  check uses the device it holds.
In values, the chart derives every engine's GPU count from `global.cluster` (the trainer's nodes x GPUs per
node) and GRPO904 checks the vLLM server's: no values key gives a pod GPUs the job does not use.

## Why is this bad?
A GPU request holds the whole device for the pod's life: at p5en prices an idle H200 costs as much as a busy
one, and the devices it holds are missing from the training placement group, which then waits or runs smaller.

## Example
```yaml
headGroupSpec:
  rayStartParams: {num-gpus: "0"}
  template:
    spec:
      containers:
        - name: ray-head
          resources: {limits: {nvidia.com/gpu: 8}}
```
Use instead:
```yaml
headGroupSpec:
  rayStartParams: {num-cpus: "0"}
  template:
    spec:
      containers:
        - name: ray-head
          resources: {limits: {cpu: "8", memory: 32Gi}}
```

## Fix
Request GPUs only where an engine runs on them, and let Ray advertise what the container gets (leave
`num-gpus` unset: Ray reads the container's `nvidia.com/gpu`).
"""

IDLE = re.compile(r"^\s*(exec\s+)?(sleep\s+(infinity|inf|\d{4,})|tail\s+-f\s+/dev/null|/?pause)\s*$")
# Images with no glibc or no Python: no CUDA program runs in them, whatever the container installs (CUDA and the
# PyPI wheels that carry it are built for glibc).
NO_CUDA_BASES = re.compile(r"^(docker\.io/)?(library/)?(busybox|alpine|curlimages/curl)(:|@|$)")
# glibc bases with no CUDA of their own: PyPI's torch, vLLM, JAX[cuda] and CuPy wheels bring the CUDA runtime, and
# the NVIDIA container runtime mounts the driver, so a program that installs them uses the GPUs.
CPU_BASES = re.compile(r"^(docker\.io/)?(library/)?(python|debian|ubuntu)(:|@|$)")
CUDA_WHEELS = re.compile(r"\b(?:pip3?|uv\s+pip|python3?\s+-m\s+pip)\s+install\b[^;&|\n]*?(?:\s|['\"])"
                         r"(?:torch|vllm|sglang|jax\[cuda|tensorflow\[and-cuda|cupy-cuda|nvidia-|paddlepaddle-gpu|"
                         r"onnxruntime-gpu|-r\s)")
RAY_IMAGE = re.compile(r"^(docker\.io/)?rayproject/ray(?P<ml>-ml)?:(?P<tag>[^@]+)")


def _gpus(c: dict) -> float:
    res = c.get("resources") if isinstance(c.get("resources"), dict) else {}
    best = 0.0
    for part in ("limits", "requests"):
        value = (res.get(part) or {}).get("nvidia.com/gpu") if isinstance(res.get(part), dict) else None
        try:
            best = max(best, float(value)) if value is not None else best
        except (TypeError, ValueError):
            pass
    return best


def _idle(c: dict) -> bool:
    argv = [*(c.get("command") or []), *(c.get("args") or [])] if isinstance(c.get("command", []), list) and \
        isinstance(c.get("args", []), list) else []
    if not argv:
        return False
    if len(argv) >= 3 and str(argv[0]).rsplit("/", 1)[-1] in ("sh", "bash") and str(argv[-2]).startswith("-"):
        return bool(IDLE.match(str(argv[-1])))
    return bool(IDLE.match(" ".join(str(a) for a in argv)))


def _installs_cuda_wheels(c: dict) -> bool:
    return bool(CUDA_WHEELS.search(" ".join(argv_of(c))))


# The driver's own tool, which the NVIDIA container runtime mounts from the host into any glibc image (its
# `utility` capability, on by default): a container that runs it is a GPU check, and uses the device it holds.
DRIVER_TOOL = re.compile(r"(?<![\w./-])(?:/usr/bin/)?nvidia-smi\b")


def _runs_driver_tool(c: dict) -> bool:
    return bool(DRIVER_TOOL.search(" ".join(argv_of(c))))


def _cpu_image(image: str) -> bool:
    m = RAY_IMAGE.match(image)
    if m:
        tag = m.group("tag")
        if re.search(r"-(gpu|cu\d+)", tag):
            return False
        # Ray's tag scheme: no platform tag aliases -cpu for rayproject/ray and -gpu for rayproject/ray-ml
        # (ray-project/ray docker/ray-ml/README.md, "Tags").
        return "-cpu" in tag or not m.group("ml")
    return bool(CPU_BASES.match(image) or NO_CUDA_BASES.match(image))


def check(ctx) -> Iterator[Hit]:
    for o, pod_path, pod in ctx.pod_templates():
        group = None
        if o.kind in ("RayCluster", "RayJob", "RayService") and pod_path.endswith(".template.spec"):
            group = node_at(o.obj, pod_path.rsplit(".template.spec", 1)[0])
        for field, i, c in containers(pod):
            gpus = _gpus(c)
            if gpus <= 0:
                continue
            where = f"{pod_path}.{field}.{i}"
            name = c.get("name", i)
            params = group.get("rayStartParams") if isinstance(group, dict) else None
            advertised = params.get("num-gpus") if isinstance(params, dict) else None
            if field == "containers" and i == 0 and advertised is not None and _below(advertised, gpus):
                yield Hit(f"{pod_path.rsplit('.template.spec', 1)[0]}.rayStartParams.num-gpus",
                          f"{o.kind} {o.name}: Ray is told num-gpus {advertised} but container {name} gets {gpus:g} "
                          "GPUs; Ray never schedules work on the rest", obj=o)
            elif _idle(c):
                yield Hit(f"{where}.resources", f"{o.kind} {o.name}: container {name} holds {gpus:g} GPUs and only "
                          "idles (assumed: unless someone works in it through kubectl exec, they sit unused)",
                          obj=o, severity=Severity.WARNING)
            elif isinstance(c.get("image"), str) and NO_CUDA_BASES.match(c["image"]):
                yield Hit(f"{where}.resources", f"{o.kind} {o.name}: container {name} holds {gpus:g} GPUs but runs "
                          f"{c['image']}, in which no CUDA program runs (no glibc or no Python)", obj=o)
            elif isinstance(c.get("image"), str) and _cpu_image(c["image"]) and not _installs_cuda_wheels(c) \
                    and not _runs_driver_tool(c):
                yield Hit(f"{where}.resources", f"{o.kind} {o.name}: container {name} holds {gpus:g} GPUs but runs "
                          f"{c['image']}, which has no CUDA (assumed: nothing it runs installs CUDA wheels, such as "
                          "torch from PyPI, which bring their own)", obj=o, severity=Severity.WARNING)


def _below(advertised, gpus: float) -> bool:
    try:
        return float(str(advertised)) < gpus
    except ValueError:
        return False
