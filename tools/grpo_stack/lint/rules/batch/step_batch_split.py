"""GRPO308 verl-step-batch-split: R3, R4, R16 of docs/batch-math.md."""

from __future__ import annotations

from collections.abc import Iterator

from ...context import LintContext
from ...finding import Hit, Severity
from ._shared import hits

CODE = "GRPO308"
NAME = "verl-step-batch-split"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "verl: the step batch must split into dp ranks and whole mini batches (0.9 v1 trainer: pads instead)."
SHEET_IDS = ('R3', 'R4', 'R16')
FRAMEWORK = 'verl'  # None: verl and miles
DOC = """## What it does
The verl 0.9 legacy trainer (`useV1Trainer: false`) need `(train_batch_size * n) % dp == 0` (R4)
and `train_batch_size % ppo_mini_batch_size == 0` (R3). The 0.9 v1 trainer pads the batch with synthetic
samples to a multiple of `lcm(dp, ppo_mini_batch_size * n)` instead: a warning that says how many samples
each step wastes. R16: in the v1 trainer's separate-async mode the batch must also divide by
`parameter_sync_step` and `gen_batch_size`.

## Why is this bad?
R3/R4 are asserts in the mini-batch iterator and the dispatch split: a crash at the first update. The
padding is silent compute spent on samples that carry no gradient.

## Example
```yaml
global:
  job:
    rollout: {samplesPerPrompt: 8}
    verl:
      useV1Trainer: false
      batch: {trainBatchSize: 128, ppoMiniBatchSize: 48}
```
Use instead:
```yaml
global:
  job:
    rollout: {samplesPerPrompt: 8}
    verl:
      useV1Trainer: false
      batch: {trainBatchSize: 128, ppoMiniBatchSize: 32}
```

## Fix
Make train_batch_size a multiple of ppo_mini_batch_size (values in the message).
"""


def check(ctx: LintContext) -> Iterator[Hit]:
    yield from hits(ctx, SHEET_IDS, FRAMEWORK)
