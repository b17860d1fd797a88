"""GRPO302 verl-train-batch-divisible: V2 of docs/batch-math.md."""

from __future__ import annotations

from collections.abc import Iterator

from ...context import LintContext
from ...finding import Hit, Severity
from ._shared import hits

CODE = "GRPO302"
NAME = "verl-train-batch-divisible"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "verl: train_batch_size x n must be divisible by dp x micro (Megatron) or by the GPU count (FSDP)."
SHEET_IDS = ('V2',)
FRAMEWORK = 'verl'  # None: verl and miles
DOC = """## What it does
With static batch sizes verl's validate_config requires `(train_batch_size * n) % minimal_bsz == 0`,
where minimal_bsz is `dp * ppo_micro_batch_size_per_gpu` for Megatron (dp = GPUs / (tp*pp*cp)) and the
GPU count for FSDP (Ulysses sp is ignored here, so this is stricter than the runtime split).

## Why is this bad?
The job is rejected at startup. This is the qwen2.5-72b TP4/PP4 on 48 GPUs case: dp = 3, so 256 prompts x 4
samples = 1024 rows cannot be split into micro batches of 2 on 3 ranks.

## Example
```yaml
global:
  cluster: {nodes: 6, gpusPerNode: 8}
  job:
    parallel: {tensor: 4, pipeline: 4}
    verl:
      batch: {trainBatchSize: 256, ppoMiniBatchSize: 24, ppoMicroBatchSizePerGpu: 2}
```
Use instead:
```yaml
global:
  cluster: {nodes: 6, gpusPerNode: 8}
  job:
    parallel: {tensor: 4, pipeline: 4}
    verl:
      batch: {trainBatchSize: 192, ppoMiniBatchSize: 24, ppoMicroBatchSizePerGpu: 2}
```

## Fix
Use one of the train batch sizes the message lists (they pass every batch rule, including the v1 trainer's
padding).
"""


def check(ctx: LintContext) -> Iterator[Hit]:
    yield from hits(ctx, SHEET_IDS, FRAMEWORK)
