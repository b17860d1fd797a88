"""GRPO309 verl-log-prob-micro-batch: R5 of docs/batch-math.md."""

from __future__ import annotations

from collections.abc import Iterator

from ...context import LintContext
from ...finding import Hit, Severity
from ._shared import hits

CODE = "GRPO309"
NAME = "verl-log-prob-micro-batch"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "verl: the per-rank log-prob batch must be a whole number of log-prob micro batches."
SHEET_IDS = ('R5',)
FRAMEWORK = 'verl'  # None: verl and miles
DOC = """## What it does
Checks `(rows / dp) % log_prob_micro_batch_size_per_gpu == 0` for the actor's old-log-prob pass and
the reference policy, where rows is `train_batch_size * n`, padded by the 0.9 v1 trainer.

## Why is this bad?
`prepare_micro_batches` asserts it at the first log-prob computation on the GPUs.

## Example
```yaml
global:
  cluster: {nodes: 1, gpusPerNode: 8}
  job:
    rollout: {samplesPerPrompt: 8}
    verl:
      batch: {trainBatchSize: 128, ppoMiniBatchSize: 32, logProbMicroBatchSizePerGpu: 24}
```
Use instead:
```yaml
global:
  cluster: {nodes: 1, gpusPerNode: 8}
  job:
    rollout: {samplesPerPrompt: 8}
    verl:
      batch: {trainBatchSize: 128, ppoMiniBatchSize: 32, logProbMicroBatchSizePerGpu: 16}
```

## Fix
Use a log-prob micro batch size that divides the per-rank batch (listed in the message).
"""


def check(ctx: LintContext) -> Iterator[Hit]:
    yield from hits(ctx, SHEET_IDS, FRAMEWORK)
