"""GRPO311 verl-vpp-micro-batch-group: R8 of docs/batch-math.md."""

from __future__ import annotations

from collections.abc import Iterator

from ...context import LintContext
from ...finding import Hit, Severity
from ._shared import hits

CODE = "GRPO311"
NAME = "verl-vpp-micro-batch-group"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "verl Megatron with virtual pipeline: micro batches per update must be a multiple of pp."
SHEET_IDS = ('R8',)
FRAMEWORK = 'verl'  # None: verl and miles
DOC = """## What it does
With `virtualPipeline` set and static batch sizes, the number of micro batches per rank and update,
`(ppo_mini_batch_size * n / dp) / ppo_micro_batch_size_per_gpu`, must be divisible by
`microbatch_group_size_per_vp_stage`, which defaults to pp.

## Why is this bad?
The Megatron engine asserts it at the first update (`micro_batches ... must be divisible by
num_batches_divided_by`).

## Example
```yaml
global:
  cluster: {nodes: 2, gpusPerNode: 8}
  job:
    parallel: {tensor: 2, pipeline: 4, virtualPipeline: 2}
    rollout: {samplesPerPrompt: 4}
    verl:
      batch: {trainBatchSize: 96, ppoMiniBatchSize: 24, ppoMicroBatchSizePerGpu: 2}
```
Use instead:
```yaml
global:
  cluster: {nodes: 2, gpusPerNode: 8}
  job:
    parallel: {tensor: 2, pipeline: 4, virtualPipeline: 2}
    rollout: {samplesPerPrompt: 4}
    verl:
      batch: {trainBatchSize: 96, ppoMiniBatchSize: 24, ppoMicroBatchSizePerGpu: 1}
```

## Fix
Pick a micro batch size (listed) that leaves a multiple of pp micro batches.
"""


def check(ctx: LintContext) -> Iterator[Hit]:
    yield from hits(ctx, SHEET_IDS, FRAMEWORK)
