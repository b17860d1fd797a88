"""GRPO306 verl-mini-batch-per-dp: R1 of docs/batch-math.md."""

from __future__ import annotations

from collections.abc import Iterator

from ...context import LintContext
from ...finding import Hit, Severity
from ._shared import hits

CODE = "GRPO306"
NAME = "verl-mini-batch-per-dp"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "verl: ppo_mini_batch_size x n must split evenly over the training data-parallel ranks."
SHEET_IDS = ('R1',)
FRAMEWORK = 'verl'  # None: verl and miles
DOC = """## What it does
Checks `(ppo_mini_batch_size * n) % dp == 0`, dp = GPUs / ulysses_sp (FSDP) or GPUs / (tp*pp*cp) (Megatron).

## Why is this bad?
validate_config does not check it. verl 0.8+ asserts it in `TrainingWorker.train_mini_batch` at the
first actor update, after the first rollout: minutes of GPU time, then a crash. FSDP on 48 GPUs with
mini batch 64 and n=4 gives 256 rows over 48 ranks.

## Example
```yaml
global:
  cluster: {nodes: 6, gpusPerNode: 8}
  job:
    backend: fsdp
    verl:
      batch: {trainBatchSize: 192, ppoMiniBatchSize: 64, ppoMicroBatchSizePerGpu: 2}
```
Use instead:
```yaml
global:
  cluster: {nodes: 6, gpusPerNode: 8}
  job:
    backend: fsdp
    verl:
      batch: {trainBatchSize: 192, ppoMiniBatchSize: 48, ppoMicroBatchSizePerGpu: 2}
```

## Fix
Use a mini batch size the message lists.
"""


def check(ctx: LintContext) -> Iterator[Hit]:
    yield from hits(ctx, SHEET_IDS, FRAMEWORK)
