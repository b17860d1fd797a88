"""GRPO307 verl-micro-batch-per-dp: R2 of docs/batch-math.md."""

from __future__ import annotations

from collections.abc import Iterator

from ...context import LintContext
from ...finding import Hit, Severity
from ._shared import hits

CODE = "GRPO307"
NAME = "verl-micro-batch-per-dp"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "verl: the per-rank mini batch must be a whole number of micro batches."
SHEET_IDS = ('R2',)
FRAMEWORK = 'verl'  # None: verl and miles
DOC = """## What it does
Checks `((ppo_mini_batch_size * n) / dp) % ppo_micro_batch_size_per_gpu == 0` for static batch sizes.

## Why is this bad?
`prepare_micro_batches` asserts it at the first actor update on the GPUs (`data size must be divisible by
force_group_size * micro_batch_size_per_gpu`); validate_config does not check it.

## Example
```yaml
global:
  cluster: {nodes: 1, gpusPerNode: 8}
  job:
    backend: fsdp
    rollout: {samplesPerPrompt: 5}
    verl:
      batch: {trainBatchSize: 256, ppoMiniBatchSize: 64, ppoMicroBatchSizePerGpu: 16}
```
Use instead:
```yaml
global:
  cluster: {nodes: 1, gpusPerNode: 8}
  job:
    backend: fsdp
    rollout: {samplesPerPrompt: 5}
    verl:
      batch: {trainBatchSize: 256, ppoMiniBatchSize: 64, ppoMicroBatchSizePerGpu: 8}
```

## Fix
Use a micro batch size that divides the per-rank mini batch (listed in the message).
"""


def check(ctx: LintContext) -> Iterator[Hit]:
    yield from hits(ctx, SHEET_IDS, FRAMEWORK)
