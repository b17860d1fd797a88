"""GRPO845 ray-head-without-driver."""

from __future__ import annotations

from collections.abc import Iterator

from ..context import node_at
from ..finding import Hit, Severity
from ._objects import containers

CODE = "GRPO845"
NAME = "ray-head-without-driver"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = ("A Ray head with no CUDA driver advertises GPUs, or CPUs where miles runs (its RolloutManager, a CPU "
           "actor, imports CUDA).")
DOC = """## What it does
For the head group of every RayCluster, RayJob and RayService: when the head container has no CUDA driver — no
`nvidia.com/gpu` in its resources, or `NVIDIA_VISIBLE_DEVICES=void` — it must not advertise GPUs with `num-gpus`
above 0. Where the release runs miles' trainer and the cluster runs CUDA work (a worker group gets
`nvidia.com/gpu`), the head's `rayStartParams` must also set `num-cpus: "0"`: otherwise Ray may place miles'
CPU-only RolloutManager there. The trainer is identified by its command line, wherever the files hold it (a
RayJob entrypoint, a submitter's args, a script in a ConfigMap): a `train*.py` with one of miles' own arguments
(`--actor-num-gpus-per-node`, `--actor-num-nodes`, `--rollout-num-gpus`, `--hf-checkpoint`); in values, the chart
runs it when `global.job.framework` is miles. A head that advertises CPUs to other Ray programs is not reported:
what their CPU actors import is not known here (KubeRay recommends `num-cpus: "0"` on a production head, as a
matter of capacity). A CPU-only or TPU cluster is not reported: nothing there imports CUDA.
`num-cpus: "0"` keeps off only what asks for a CPU. Actors hard-pinned to the head node by the program are
placed there whatever the head advertises; miles (dec268f7) creates them with two flags, reported in manifests
wherever a string of the set passes them (a RayJob entrypoint, a submitter's args) while a head has no driver
(in values the job builder refuses them: GRPO350):
`--pin-rollout-manager-to-head` (the RolloutManager, `num_cpus=1`, which imports megatron.core and
transformer_engine: on a head with CPUs it dies at `libcuda.so.1`, on a `num-cpus: "0"` head it can never be
placed and the job waits forever) and `--multi-lora` (the MultiLoRAController, `num_cpus=0`, pinned to the
head with `compute_ray_pin_head_options()`).

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
    num-cpus: "0"   # no CPU-requesting actor lands here; the job passes no flag that pins one to the head
```

## Fix
Set `num-cpus: "0"` on a head without a driver (submit the driver to a worker with an entrypoint resource), drop
`--pin-rollout-manager-to-head` and `--multi-lora` from the job, or give the head a GPU and a driver.
"""


# miles flags whose actors are hard-pinned to the Ray head node (miles dec268f7: miles/ray/placement_group.py:189,
# miles/ray/multi_lora/controller.py:116-122, both through miles/utils/ray_utils.py compute_ray_pin_head_options).
HEAD_PINNING_FLAGS = {
    "--pin-rollout-manager-to-head": "the RolloutManager (imports megatron.core / transformer_engine)",
    "--multi-lora": "the MultiLoRAController (num_cpus=0)",
}


def _pinning_flags(words) -> list[str]:
    return [f for f in HEAD_PINNING_FLAGS if any(w == f or w.startswith(f + "=") for w in words)]


def _driverless_heads(templates) -> list:
    out = []
    for o, pod_path, pod in templates:
        if ".headGroupSpec." in f".{pod_path}.":
            head = next((c for field, _, c in containers(pod) if field == "containers"), None)
            if head is not None and not _has_driver(head):
                out.append(o)
    return out


def _head_pinning(ctx, templates) -> Iterator[Hit]:
    heads = _driverless_heads(templates)
    if not heads:
        return
    if ctx.has_values:
        return  # the job builder refuses these flags for the chart's driver-less head (GRPO350)
    for o in ctx.objects:
        for path, text in ctx.object_strings(o):
            if not any(f in text for f in HEAD_PINNING_FLAGS):
                continue  # (a word equal to a flag, or `flag=...`, contains it)
            for f in _pinning_flags(text.split()):
                yield Hit(path, f"{o.kind} {o.name}: the job passes {f}, which pins {HEAD_PINNING_FLAGS[f]} to the "
                          f"Ray head, and the head of {heads[0].kind} {heads[0].name} has no CUDA driver", obj=o)


# Arguments of miles' trainer alone (miles/utils/arguments.py; the job builder passes them, job/miles.py).
MILES_ARGUMENTS = ("--actor-num-gpus-per-node", "--actor-num-nodes", "--rollout-num-gpus", "--hf-checkpoint")


def _miles_trainer(ctx) -> str | None:
    """`Kind name` of the first object whose strings run miles' trainer (a train*.py with one of its arguments);
    in values, the chart's job when its framework is miles."""
    if ctx.has_values:
        return "the chart's job" if ctx.get("global.job.framework") == "miles" else None
    for o in ctx.objects:
        texts = [t for _p, t in ctx.object_strings(o) if "--" in t or ".py" in t]
        words = [w for t in texts for w in t.split()]
        script = any(w.rsplit("/", 1)[-1].startswith("train") and w.endswith(".py") for w in words)
        if script and any(w == f or w.startswith(f + "=") for w in words for f in MILES_ARGUMENTS):
            return f"{o.kind} {o.name}"
    return None


def check(ctx) -> Iterator[Hit]:
    templates = list(ctx.pod_templates())
    yield from _head_pinning(ctx, templates)
    miles: list[str | None] = []  # found once, when a driverless head first advertises CPUs
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
            if not miles:
                miles.append(_miles_trainer(ctx))
            if miles[0] is None:
                continue
            shown = f"num-cpus {cpus}" if cpus else "its CPUs (num-cpus unset)"
            yield Hit(f"{group_path}.rayStartParams", f"{o.kind} {o.name}: the Ray head has no CUDA driver but "
                      f"advertises {shown}, and miles' trainer runs here ({miles[0]}): Ray can place its "
                      "RolloutManager (a CPU actor that imports megatron.core and CUDA) on the head", obj=o)


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

