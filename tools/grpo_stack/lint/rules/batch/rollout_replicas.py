"""GRPO312 verl-rollout-replicas: R9, R10, R11, R12 of docs/batch-math.md."""

from __future__ import annotations

from collections.abc import Iterator

from ...context import LintContext
from ...finding import Hit, Severity
from ._shared import hits

CODE = "GRPO312"
NAME = "verl-rollout-replicas"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "verl: vLLM replicas (rollout tp) must tile the GPUs and fill whole nodes."
SHEET_IDS = ('R9', 'R10', 'R11', 'R12')
FRAMEWORK = 'verl'  # None: verl and miles
DOC = """## What it does
R9 `GPUs % (rollout tp * dp * pp) == 0`; R10 a replica larger than a node spans whole nodes; R11 with
rollout dp > 1 the node's GPUs divide by tp; R12 rollout EP equals tp*dp and rollout PP is not supported.

## Why is this bad?
All are asserts when the workers build the rollout engines, after the Ray cluster is up.

## Example
```yaml
global:
  cluster: {nodes: 1, gpusPerNode: 8}
  job:
    rollout: {tensorParallel: 16}
```
Use instead:
```yaml
global:
  cluster: {nodes: 1, gpusPerNode: 8}
  job:
    rollout: {tensorParallel: 4}
```

## Fix
Use a rollout tensor parallel size that divides the GPU count (listed in the message).
"""


def check(ctx: LintContext) -> Iterator[Hit]:
    yield from hits(ctx, SHEET_IDS, FRAMEWORK)
