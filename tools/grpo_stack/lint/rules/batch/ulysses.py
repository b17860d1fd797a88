"""GRPO314 verl-ulysses-sequence-parallel: V6, R15 of docs/batch-math.md."""

from __future__ import annotations

from collections.abc import Iterator

from ...context import LintContext
from ...finding import Hit, Severity
from ._shared import hits

CODE = "GRPO314"
NAME = "verl-ulysses-sequence-parallel"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "verl FSDP Ulysses: sp must divide the GPUs and the attention heads; KV heads a multiple or divisor."
SHEET_IDS = ('V6', 'R15')
FRAMEWORK = 'verl'  # None: verl and miles
DOC = """## What it does
R15: `GPUs % sp == 0`, `num_attention_heads % sp == 0` and `num_key_value_heads % sp == 0 or sp %
num_key_value_heads == 0`. V6: Ulysses needs `use_remove_padding`.

## Why is this bad?
The head checks fail while the model is built on the GPUs; V6 is rejected at startup.

## Example
```yaml
global:
  job:
    backend: fsdp
    model: {preset: qwen2.5-7b}
    parallel: {ulysses: 8}
```
Use instead:
```yaml
global:
  job:
    backend: fsdp
    model: {preset: qwen2.5-7b}
    parallel: {ulysses: 4}
```

## Fix
Pick an sp that divides the heads (listed in the message).
"""


def check(ctx: LintContext) -> Iterator[Hit]:
    yield from hits(ctx, SHEET_IDS, FRAMEWORK)
