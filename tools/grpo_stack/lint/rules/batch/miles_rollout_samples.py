"""GRPO321 miles-rollout-samples: S2 of docs/batch-math.md."""

from __future__ import annotations

from collections.abc import Iterator

from ...context import LintContext
from ...finding import Hit, Severity
from ._shared import hits

CODE = "GRPO321"
NAME = "miles-rollout-samples"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "miles: rollout_batch_size x k must hold a global batch; the remainder is silently trimmed."
SHEET_IDS = ('S2',)
FRAMEWORK = 'miles'  # None: verl and miles
DOC = """## What it does
Error if `R * k < G`; warning with the number of samples dropped each rollout if `(R * k) % G != 0`.

## Why is this bad?
With too few samples training fails (`Not enough samples`); a remainder is generated, scored and thrown
away every rollout.

## Example
```yaml
global:
  job:
    rollout: {samplesPerPrompt: 8}
    miles: {rolloutBatchSize: 40, globalBatchSize: 256}
```
Use instead:
```yaml
global:
  job:
    rollout: {samplesPerPrompt: 8}
    miles: {rolloutBatchSize: 32, globalBatchSize: 256}
```

## Fix
Make rollout_batch_size x n_samples_per_prompt a multiple of global_batch_size.
"""


def check(ctx: LintContext) -> Iterator[Hit]:
    yield from hits(ctx, SHEET_IDS, FRAMEWORK)
