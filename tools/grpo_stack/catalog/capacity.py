"""Node capacity stated for an instance type the catalogue lacks (`global.instanceTypes`, `.grpo-lint.yaml`
`instance-types`): Kubernetes quantities read as the API server reads them, and the stated figures as a
catalogue row."""

from __future__ import annotations

import re

from .instances import InstanceType

UNITS = {"": 1, "n": 1e-9, "u": 1e-6, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
         "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
# The API server's quantity grammar (apimachinery resource.Quantity): a decimal number, then a binary or decimal
# SI suffix or a decimal exponent (`1e3`, `5E-1`). A scheduler reads `1e3` CPUs as a thousand: so must the rule.
QTY = re.compile(r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$")


def suffix_scale(suffix: str | None) -> float:
    """The multiplier of a quantity's suffix (QTY group 2): an SI unit or a decimal exponent."""
    if suffix and suffix[0] in "eE" and len(suffix) > 1:
        return 10.0 ** int(suffix[1:])
    return UNITS[suffix or ""]


def quantity(value) -> float:
    """0 where the value is not a quantity: the object-schema check reports those; callers compare numbers."""
    m = QTY.match(str(value).strip())
    if not m:
        return 0.0
    try:
        return float(m.group(1)) * suffix_scale(m.group(2))
    except OverflowError:
        return float("inf")


def capacity_row(name: str, cap: dict, source: str) -> InstanceType:
    """One node's allocatable capacity (and, where stated, one GPU's memory) as a catalogue row."""
    gpu = cap.get("gpuMemory")
    return InstanceType(name, 0, 0.0, cap["gpus"], cap["efa"], round(quantity(cap["cpu"]) * 1000),
                        round(quantity(cap["memory"]) / 2**20), source,
                        gpu_memory_mib=round(quantity(gpu) / 2**20) if gpu is not None else None)


def stated_in_values(values_global: dict, name: str) -> InstanceType | None:
    """The row `global.instanceTypes` states for `name`, or None."""
    stated = (values_global or {}).get("instanceTypes")
    cap = stated.get(name) if isinstance(stated, dict) else None
    return capacity_row(name, cap, f"values global.instanceTypes.{name}") if isinstance(cap, dict) else None
