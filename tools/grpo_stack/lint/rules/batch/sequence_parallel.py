"""GRPO318 megatron-sequence-parallel: M9 of docs/batch-math.md."""

from __future__ import annotations

from collections.abc import Iterator

from ...context import LintContext
from ...finding import Hit, Severity
from ._shared import hits

CODE = "GRPO318"
NAME = "megatron-sequence-parallel"
SEVERITY = Severity.WARNING
CATEGORY = "correctness"
SUMMARY = "Megatron sequence parallelism needs tp > 1; at tp = 1 it is switched off."
SHEET_IDS = ('M9',)
FRAMEWORK = None  # None: verl and miles
DOC = """## What it does
Warns when `sequenceParallel: true` with `tensor: 1`.

## Why is this bad?
Megatron-core rejects the combination; verl and Megatron-LM turn sequence parallelism off with a log line,
so the setting silently does nothing.

## Example
```yaml
global:
  job:
    parallel: {tensor: 1, sequenceParallel: true}
```
Use instead:
```yaml
global:
  job:
    parallel: {tensor: 1, sequenceParallel: false}
```

## Fix
Set sequenceParallel: false, or use tp > 1.
"""


def check(ctx: LintContext) -> Iterator[Hit]:
    yield from hits(ctx, SHEET_IDS, FRAMEWORK)
