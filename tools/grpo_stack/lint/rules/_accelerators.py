"""Which extended resources are accelerators (not a rule: no CODE): the names device plugins register for GPUs,
TPUs, Neuron devices and Gaudis. A pod that asks for one runs a model (a server, a trainer), whatever its image.

Names, each its device plugin's: `nvidia.com/gpu` and MIG slices `nvidia.com/mig-*` (NVIDIA k8s-device-plugin),
`amd.com/gpu` (ROCm k8s-device-plugin), `google.com/tpu` (GKE), `aws.amazon.com/neuron`, `neuroncore`,
`neurondevice` (Neuron device plugin), `habana.ai/gaudi` (Habana device plugin), `gpu.intel.com/i915` and `xe`
(Intel GPU plugin), `huawei.com/Ascend*` (Ascend device plugin, its virtual NPUs `Ascend910-2c` included). Shares
of a device that are not devices (`nvidia.com/gpumem`, `nvidia.com/gpucores`, `huawei.com/Ascend910B-memory` of
GPU- and NPU-sharing schedulers such as HAMi) are not counted.
"""

from __future__ import annotations

from typing import Any

from ...apivalidation import quantity

NAMES = frozenset({"nvidia.com/gpu", "amd.com/gpu", "google.com/tpu", "aws.amazon.com/neuron",
                   "aws.amazon.com/neuroncore", "aws.amazon.com/neurondevice", "habana.ai/gaudi",
                   "gpu.intel.com/i915", "gpu.intel.com/xe"})
PREFIXES = ("nvidia.com/mig-", "huawei.com/ascend")
# HAMi's NPU memory share beside the device (`huawei.com/Ascend910B-memory: 16384`, MiB; HAMi
# docs/ascend910b-support.md, the chart's `devices.ascend.resources`): a prefixed name that is not a device.
SHARES = ("-memory",)


def is_accelerator(name: Any) -> bool:
    text = str(name).lower()
    return text in NAMES or (text.startswith(PREFIXES) and not text.endswith(SHARES))


def asked(c: dict) -> dict[str, float]:
    """resource name -> how many of it the container gets (its limit, else its request), for each accelerator it
    asks for more than none of."""
    res = c.get("resources") if isinstance(c.get("resources"), dict) else {}
    out: dict[str, float] = {}
    for part in ("requests", "limits"):  # the limit wins: extended resources are granted by it
        for name, value in (res.get(part) or {}).items() if isinstance(res.get(part), dict) else ():
            count = quantity.parse(value) if value is not None else None
            if is_accelerator(name) and count:
                out[str(name)] = float(count)
    return out
