"""GRPO613 partial-gpu-node."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity
from .capacity import node_type, unknown_type_message

CODE = "GRPO613"
NAME = "partial-gpu-node"
SEVERITY = Severity.ERROR
CATEGORY = "cost"
SUMMARY = "global.cluster asks for fewer GPUs or EFA interfaces per node than the instance type has."
DOC = """## What it does
Looks up `global.cluster.gpuInstanceType` (EC2 name, or the HyperPod `ml.` name of the same type) in the instance
catalogue (`tools/grpo_stack/catalog/instances.py`, sourced rows) and compares `gpusPerNode` and `efaPerNode`
with what one node has. A type the catalogue does not list is an error with the closest catalogued names (a
typo such as `p5en.48xlarg`), unless its capacity is stated, in the values (`global.instanceTypes`) or in
`.grpo-lint.yaml` (`instance-types`, see GRPO601).

## Why is this bad?
Each Ray worker takes one node. Asking for 4 of a p5en.48xlarge's 8 GPUs leaves half the node idle while the
run is billed for all of it, and the batch rules compute dp from the smaller world. Fewer EFA interfaces than
the node has caps NCCL's inter-node bandwidth, or makes it fall back to TCP.

## Example
```yaml
global:
  cluster:
    gpuInstanceType: p5en.48xlarge
    gpusPerNode: 4
    efaPerNode: 16
```
Use instead:
```yaml
global:
  cluster:
    gpuInstanceType: p5en.48xlarge
    gpusPerNode: 8
    efaPerNode: 16
```

## Fix
Set `gpusPerNode` and `efaPerNode` to the instance type's GPU and EFA counts (the message names them), or pick
the smaller instance type that has the GPU count you want.
"""


def check(ctx) -> Iterator[Hit]:
    if not ctx.has_values:
        return
    name = ctx.get("global.cluster.gpuInstanceType")
    if not isinstance(name, str):
        return
    node = node_type(ctx, name)
    if node is None:
        yield Hit("global.cluster.gpuInstanceType", unknown_type_message(name),
                  remediation="use a catalogued type (docs/values.md lists them), or state the capacity of a real "
                  "type the catalogue lacks in global.instanceTypes or .grpo-lint.yaml")
        return
    for key, have, what in (("gpusPerNode", node.gpus, "GPUs"), ("efaPerNode", node.efa, "EFA interfaces")):
        want = ctx.get(f"global.cluster.{key}")
        if isinstance(want, int) and want < have:
            yield Hit(f"global.cluster.{key}", f"{name} has {have} {what} per node; {key} {want} leaves "
                      f"{have - want} unused on every worker ({node.origin})",
                      remediation=f"set global.cluster.{key}: {have} in your values file")
