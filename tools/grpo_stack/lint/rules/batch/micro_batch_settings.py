"""GRPO304 verl-micro-batch-settings: V4, V5, R7 of docs/batch-math.md."""

from __future__ import annotations

from collections.abc import Iterator

from ...context import LintContext
from ...finding import Hit, Severity
from ._shared import hits

CODE = "GRPO304"
NAME = "verl-micro-batch-settings"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "verl: static batching needs the micro batch sizes; dynamic batching needs a token budget."
SHEET_IDS = ('V4', 'V5', 'R7')
FRAMEWORK = 'verl'  # None: verl and miles
DOC = """## What it does
Static batch size: `ppo_micro_batch_size_per_gpu` and the rollout/ref `log_prob_micro_batch_size_per_gpu`
must be set (V5; the deprecated global micro batch must divide the mini batch, V4). Dynamic batch size:
`ppo_max_token_len_per_gpu` must be set and the log-prob passes must use dynamic batching too (R7).

## Why is this bad?
A missing micro batch size is rejected at startup (V5). The dynamic-batching asserts (R7) sit in the
worker init on the GPUs, after the cluster is up.

## Example
```yaml
global:
  job:
    verl:
      batch: {useDynamicBsz: false, ppoMicroBatchSizePerGpu: null}
```
Use instead:
```yaml
global:
  job:
    verl:
      batch: {useDynamicBsz: false, ppoMicroBatchSizePerGpu: 2, logProbMicroBatchSizePerGpu: 4}
```

## Fix
Set ppoMicroBatchSizePerGpu and logProbMicroBatchSizePerGpu, or turn on useDynamicBsz with
ppoMaxTokenLenPerGpu.
"""


def check(ctx: LintContext) -> Iterator[Hit]:
    yield from hits(ctx, SHEET_IDS, FRAMEWORK)
