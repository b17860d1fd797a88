"""GRPO316 megatron-pipeline-layers: M2, M8 of docs/batch-math.md."""

from __future__ import annotations

from collections.abc import Iterator

from ...context import LintContext
from ...finding import Hit, Severity
from ._shared import hits

CODE = "GRPO316"
NAME = "megatron-pipeline-layers"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "Megatron: layers divisible by pp (and by vpp per rank); virtual pipeline needs pp > 1."
SHEET_IDS = ('M2', 'M8')
FRAMEWORK = None  # None: verl and miles
DOC = """## What it does
M8 `num_layers % pp == 0` and, with a virtual pipeline, `(num_layers / pp) % vpp == 0`; M2 vpp needs pp > 1.

## Why is this bad?
Megatron asserts it while building the layer stack on each pipeline rank.

## Example
```yaml
global:
  cluster: {nodes: 6, gpusPerNode: 8}
  job:
    model: {preset: qwen2.5-72b}
    parallel: {tensor: 8, pipeline: 3}
```
Use instead:
```yaml
global:
  cluster: {nodes: 6, gpusPerNode: 8}
  job:
    model: {preset: qwen2.5-72b}
    parallel: {tensor: 4, pipeline: 4}
```

## Fix
Use a pipeline size that divides the layer count (listed in the message).
"""


def check(ctx: LintContext) -> Iterator[Hit]:
    yield from hits(ctx, SHEET_IDS, FRAMEWORK)
