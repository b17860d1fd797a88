"""GRPO320 miles-global-batch-divisible: S1, S3 of docs/batch-math.md."""

from __future__ import annotations

from collections.abc import Iterator

from ...context import LintContext
from ...finding import Hit, Severity
from ._shared import hits

CODE = "GRPO320"
NAME = "miles-global-batch-divisible"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "miles: global_batch_size must be divisible by micro_batch_size x dp."
SHEET_IDS = ('S1', 'S3')
FRAMEWORK = 'miles'  # None: verl and miles
DOC = """## What it does
S3 `G % (b * dp) == 0` with dp = actor GPUs / (tp*pp*cp) (Megatron's microbatch calculator; also with
dynamic batch size, b = 1). S1: with num_steps_per_rollout, G must equal R*k // steps.

## Why is this bad?
Megatron's num-microbatches calculator fails at actor init.

## Example
```yaml
global:
  cluster: {nodes: 3, gpusPerNode: 8}
  job:
    parallel: {tensor: 2}
    miles: {rolloutBatchSize: 32, globalBatchSize: 250}
```
Use instead:
```yaml
global:
  cluster: {nodes: 3, gpusPerNode: 8}
  job:
    parallel: {tensor: 2}
    miles: {rolloutBatchSize: 32, globalBatchSize: 240}
```

## Fix
Use a global batch size the message lists.
"""


def check(ctx: LintContext) -> Iterator[Hit]:
    yield from hits(ctx, SHEET_IDS, FRAMEWORK)
