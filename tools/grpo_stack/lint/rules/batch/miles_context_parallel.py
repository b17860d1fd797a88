"""GRPO323 miles-context-parallel-seq: S7 of docs/batch-math.md."""

from __future__ import annotations

from collections.abc import Iterator

from ...context import LintContext
from ...finding import Hit, Severity
from ._shared import hits

CODE = "GRPO323"
NAME = "miles-context-parallel-seq"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "miles: with context parallelism seq_length must be divisible by 2 x cp."
SHEET_IDS = ('S7',)
FRAMEWORK = 'miles'  # None: verl and miles
DOC = """## What it does
`seq_length % (2 * cp) == 0` when cp > 1; miles uses the placeholder seq_length 4096.

## Why is this bad?
Megatron-LM's argument validation rejects the run.

## Example
```yaml
global:
  cluster: {nodes: 3, gpusPerNode: 8}
  job:
    parallel: {tensor: 2, context: 3}
```
Use instead:
```yaml
global:
  cluster: {nodes: 3, gpusPerNode: 8}
  job:
    parallel: {tensor: 2, context: 4}
```

## Fix
Use a power-of-two context parallel size (listed in the message).
"""


def check(ctx: LintContext) -> Iterator[Hit]:
    yield from hits(ctx, SHEET_IDS, FRAMEWORK)
