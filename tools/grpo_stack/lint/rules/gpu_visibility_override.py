"""GRPO874 gpu-visibility-override."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..finding import Hit, Severity
from ._accelerators import asked as accelerators_asked
from ._objects import containers, literal_env
from ._one_shot import inspects_only, waits_only

CODE = "GRPO874"
NAME = "gpu-visibility-override"
SEVERITY = Severity.WARNING
CATEGORY = "correctness"
SUMMARY = ("A container sets NVIDIA_VISIBLE_DEVICES itself, so it may see and use GPUs the scheduler gave to other "
           "pods, or GPUs it never asked for.")
DOC = """## What it does
Reads every container of every pod template but a DaemonSet's (node agents such as exporters see the whole node
by design) for a literal `NVIDIA_VISIBLE_DEVICES` in its env, other than `void` or `none` (which hide the GPUs).
A container that only waits (a host kept for `kubectl exec`) or only inspects the devices (`nvidia-smi`) is left
alone.
Reported, as a warning, when:
- the container asks for NVIDIA GPUs and the value names devices (`0`, `0,1`, a `GPU-` UUID): it pins physical
  GPUs whatever the device plugin allocated;
- the container asks for NVIDIA GPUs, the value is `all`, and a literal `CUDA_VISIBLE_DEVICES` then picks devices
  by index: the process runs on the node's GPU of that index, not on the one it was given;
- the container asks for no GPU and the value is `all` or names devices: it uses GPUs the scheduler never counted.

The assumption named in the message: the NVIDIA device plugin passes its allocation in that same variable (its
`envvar` device-list strategy, the plugin's default). The kubelet writes a container's own env after the device
plugin's, so the container's value is the one the NVIDIA container runtime reads. Under the `volume-mounts` or CDI
strategies, with the runtime told to ignore the variable in unprivileged containers, the value has no effect.

## Why is this bad?
Two pods then share a GPU that the scheduler gave to one of them. The first to load a model takes the memory, and
the other fails with CUDA out of memory. Or both run at half speed, with nothing in the pod specs to say why. A pod
that asks for no GPU but sets `all` escapes the GPU quota, and the cluster's GPU accounting no longer matches what
runs.

## Example
```yaml
env:
  - {name: NVIDIA_VISIBLE_DEVICES, value: all}
  - {name: CUDA_VISIBLE_DEVICES, value: "0"}
resources:
  limits: {nvidia.com/gpu: 1}
```
Use instead:
```yaml
resources:
  limits: {nvidia.com/gpu: 1}   # the device plugin sets the visible devices
```

## Fix
Drop `NVIDIA_VISIBLE_DEVICES` (and device indices in `CUDA_VISIBLE_DEVICES`) from the pod spec and ask for GPUs
with `nvidia.com/gpu`: the device plugin then sets the devices the container sees. To share a GPU, use the device
plugin's time-slicing or MPS sharing, or MIG.
"""

HIDDEN = {"void", "none", ""}
# A device list: indices (0,1), GPU or MIG UUIDs, MIG device names (0:1).
DEVICE = r"(?:\d+(?::\d+)?|(?:GPU|MIG)-[0-9A-Fa-f-]+)"
DEVICE_LIST = re.compile(rf"^\s*{DEVICE}(?:\s*,\s*{DEVICE})*\s*$")
STRATEGY = ("under the NVIDIA device plugin's default envvar device-list strategy, where the container's own value "
            "wins over the one the plugin sets")


def check(ctx) -> Iterator[Hit]:
    for o, pod_path, pod in ctx.pod_templates():
        if o.kind == "DaemonSet":
            continue
        for field, i, c in containers(pod):
            env = literal_env(c)
            value = env.get("NVIDIA_VISIBLE_DEVICES")
            word = (value or "").strip().lower()
            if value is None or word in HIDDEN or waits_only(c) or inspects_only(c):
                continue  # a host kept for `kubectl exec` or a device check uses the GPUs only while someone looks
            gpus = sum(n for name, n in accelerators_asked(c).items() if name.startswith("nvidia.com/"))
            named = bool(DEVICE_LIST.match(value))
            picked = DEVICE_LIST.match(env.get("CUDA_VISIBLE_DEVICES", ""))
            at = f"{o.kind} {o.name}: container {c.get('name', i)}"
            if gpus and named:
                why = (f"asks for {gpus:g} NVIDIA GPU(s) but sets NVIDIA_VISIBLE_DEVICES={value}: it sees those "
                       "physical GPUs whatever the device plugin allocated")
            elif gpus and word == "all" and picked:
                why = (f"asks for {gpus:g} NVIDIA GPU(s) but sets NVIDIA_VISIBLE_DEVICES=all and CUDA_VISIBLE_DEVICES="
                       f"{env['CUDA_VISIBLE_DEVICES']}: it runs on the node's GPU of that index, not on the one it was "
                       "given")
            elif not gpus and (named or word == "all"):
                why = (f"asks for no GPU but sets NVIDIA_VISIBLE_DEVICES={value}: it uses GPUs the scheduler never "
                       "counted, which other pods are given")
            else:
                continue
            yield Hit(_env_path(pod_path, field, i, c), f"{at} {why} ({STRATEGY})", obj=o)


def _env_path(pod_path: str, field: str, i: int, c: dict) -> str:
    for j, e in enumerate(c.get("env") or []):
        if isinstance(e, dict) and e.get("name") == "NVIDIA_VISIBLE_DEVICES":
            return f"{pod_path}.{field}.{i}.env.{j}.value"
    return f"{pod_path}.{field}.{i}.env"
