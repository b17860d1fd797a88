"""GRPO845 ray-head-without-driver."""

from __future__ import annotations

from collections.abc import Iterator

from ..context import node_at
from ..finding import Hit, Severity
from ._objects import containers

CODE = "GRPO845"
NAME = "ray-head-without-driver"
SEVERITY = Severity.ERROR
SUMMARY = "A Ray head with no CUDA driver advertises CPUs, so Ray can place CUDA-importing actors on it."
DOC = """## What it does
For the head group of every RayCluster, RayJob and RayService: when the head container has no CUDA driver — no
`nvidia.com/gpu` in its resources, or `NVIDIA_VISIBLE_DEVICES=void` — it must not advertise GPUs with `num-gpus`
above 0, and, when the cluster runs CUDA work (a worker group gets `nvidia.com/gpu`), its `rayStartParams` must
set `num-cpus: "0"`. Otherwise Ray schedules CPU-only actors and the job driver on the head. A CPU-only or TPU
cluster is not reported: nothing there imports CUDA.

## Why is this bad?
miles' RolloutManager is created with `num_cpus=1, num_gpus=0` and imports megatron.core → transformer_engine,
which dlopens libcuda.so.1. The predecessor's head (pinned to a GPU node, yet with `NVIDIA_VISIBLE_DEVICES=void`)
advertised CPUs, Ray placed the actor there, and the job died 46 s after submission with
`OSError: libcuda.so.1` — after the GPU placement group had formed on the workers.

## Example
```yaml
headGroupSpec:
  rayStartParams:
    dashboard-host: 0.0.0.0
    num-gpus: "0"
```
Use instead:
```yaml
headGroupSpec:
  rayStartParams:
    dashboard-host: 0.0.0.0
    num-gpus: "0"
    num-cpus: "0"   # nothing that imports CUDA can land on a driver-less head
```

## Fix
Set `num-cpus: "0"` on a head without a driver (submit the driver to a worker with an entrypoint resource), or
give the head a GPU and a driver.
"""


def check(ctx) -> Iterator[Hit]:
    templates = list(ctx.pod_templates())
    # Objects whose Ray cluster runs CUDA work: some pod of theirs gets a GPU. A CPU-only (or TPU) cluster has no
    # CUDA-importing actor that a CPU on the head could attract.
    cuda = {id(o) for o, _, pod in templates if any(_has_driver(c) for _, _, c in containers(pod))}
    for o, pod_path, pod in templates:
        if ".headGroupSpec." not in f".{pod_path}.":
            continue
        group_path = pod_path.rsplit(".template.spec", 1)[0]
        group = node_at(o.obj, group_path)
        params = (group.get("rayStartParams") or {}) if isinstance(group, dict) else {}
        head = next((c for field, _, c in containers(pod) if field == "containers"), None)
        if head is None or _has_driver(head):
            continue
        cpus, gpus = str(params.get("num-cpus", "")).strip(), str(params.get("num-gpus", "")).strip()
        if _positive(gpus):
            yield Hit(f"{group_path}.rayStartParams.num-gpus", f"{o.kind} {o.name}: the Ray head has no CUDA driver "
                      f"but advertises num-gpus {gpus}; GPU actors placed there fail at CUDA init", obj=o)
        if cpus != "0" and cpus != "0.0" and id(o) in cuda:
            shown = f"num-cpus {cpus}" if cpus else "its CPUs (num-cpus unset)"
            yield Hit(f"{group_path}.rayStartParams", f"{o.kind} {o.name}: the Ray head has no CUDA driver but "
                      f"advertises {shown}; Ray can place CUDA-importing actors (miles RolloutManager, the job "
                      "driver) there", obj=o)


def _has_driver(container: dict) -> bool:
    items = container.get("env")
    env = {e.get("name"): str(e.get("value")) for e in (items if isinstance(items, list) else [])
           if isinstance(e, dict)}
    if env.get("NVIDIA_VISIBLE_DEVICES") == "void":
        return False
    res = container.get("resources")
    res = res if isinstance(res, dict) else {}
    return any(_positive(str(res[k].get("nvidia.com/gpu", "0"))) for k in ("limits", "requests")
               if isinstance(res.get(k), dict))


def _positive(value: str) -> bool:
    try:
        return float(value) > 0
    except ValueError:
        return False

