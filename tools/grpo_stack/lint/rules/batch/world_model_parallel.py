"""GRPO301 megatron-world-divisible: V1, M1, S4 of docs/batch-math.md."""

from __future__ import annotations

from collections.abc import Iterator

from ...context import LintContext
from ...finding import Hit, Severity
from ._shared import hits

CODE = "GRPO301"
NAME = "megatron-world-divisible"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "The training GPUs must split into whole tp x pp x cp model replicas."
SHEET_IDS = ('V1', 'M1', 'S4')
FRAMEWORK = None  # None: verl and miles
DOC = """## What it does
Checks that the training world (nodes x GPUs per node; for miles the actor nodes) is divisible by
tensor x pipeline x context parallel size.

## Why is this bad?
verl's validate_config rejects it at startup (V1). With dynamic batch size verl skips that check and
Megatron's `initialize_model_parallel` fails on the GPUs instead (M1); miles fails in Megatron-LM's
argument validation (S4).

## Example
```yaml
global:
  cluster: {nodes: 1, gpusPerNode: 8}
  job:
    parallel: {tensor: 3, pipeline: 1, context: 1}
```
Use instead:
```yaml
global:
  cluster: {nodes: 1, gpusPerNode: 8}
  job:
    parallel: {tensor: 4, pipeline: 1, context: 1}
```

## Fix
Pick tp, pp, cp whose product divides the GPU count, or change the node count. The message lists the
nearest tensor sizes that pass every batch rule.
"""


def check(ctx: LintContext) -> Iterator[Hit]:
    yield from hits(ctx, SHEET_IDS, FRAMEWORK)
