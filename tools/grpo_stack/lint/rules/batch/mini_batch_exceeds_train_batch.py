"""GRPO303 verl-mini-batch-exceeds-train-batch: V3 of docs/batch-math.md."""

from __future__ import annotations

from collections.abc import Iterator

from ...context import LintContext
from ...finding import Hit, Severity
from ._shared import hits

CODE = "GRPO303"
NAME = "verl-mini-batch-exceeds-train-batch"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "verl: ppo_mini_batch_size must not exceed train_batch_size."
SHEET_IDS = ('V3',)
FRAMEWORK = 'verl'  # None: verl and miles
DOC = """## What it does
Checks `train_batch_size >= ppo_mini_batch_size` (both in prompts) for static batch sizes.

## Why is this bad?
verl's ActorConfig.validate rejects the job at startup: one step must hold at least one mini batch.

## Example
```yaml
global:
  job:
    verl:
      batch: {trainBatchSize: 16, ppoMiniBatchSize: 32}
```
Use instead:
```yaml
global:
  job:
    verl:
      batch: {trainBatchSize: 128, ppoMiniBatchSize: 32}
```

## Fix
Lower ppoMiniBatchSize (the message lists values that divide the rest of the batch math) or raise
trainBatchSize.
"""


def check(ctx: LintContext) -> Iterator[Hit]:
    yield from hits(ctx, SHEET_IDS, FRAMEWORK)
