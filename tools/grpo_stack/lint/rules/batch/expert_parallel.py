"""GRPO317 megatron-expert-parallel: M3, M7 of docs/batch-math.md."""

from __future__ import annotations

from collections.abc import Iterator

from ...context import LintContext
from ...finding import Hit, Severity
from ._shared import hits

CODE = "GRPO317"
NAME = "megatron-expert-parallel"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "Megatron MoE: world divisible by etp x ep x pp; experts divisible by ep; ep > 1 only on MoE models."
SHEET_IDS = ('M3', 'M7')
FRAMEWORK = None  # None: verl and miles
DOC = """## What it does
M3 `world % (etp * ep * pp) == 0` (etp defaults to tp); M7 `num_experts % ep == 0`, and ep > 1 needs a
MoE model.

## Why is this bad?
Megatron fails building the expert process groups or the MoE layer on the GPUs.

## Example
```yaml
global:
  cluster: {nodes: 2, gpusPerNode: 8}
  job:
    model: {preset: qwen3-30b-a3b}
    parallel: {tensor: 2, expert: 6, expertTensor: 1}
```
Use instead:
```yaml
global:
  cluster: {nodes: 2, gpusPerNode: 8}
  job:
    model: {preset: qwen3-30b-a3b}
    parallel: {tensor: 2, expert: 8, expertTensor: 1}
```

## Fix
Use an expert parallel size that divides the experts and the world (listed in the message).
"""


def check(ctx: LintContext) -> Iterator[Hit]:
    yield from hits(ctx, SHEET_IDS, FRAMEWORK)
