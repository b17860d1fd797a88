"""GRPO315 megatron-attention-heads: M5, M6 of docs/batch-math.md."""

from __future__ import annotations

from collections.abc import Iterator

from ...context import LintContext
from ...finding import Hit, Severity
from ._shared import hits

CODE = "GRPO315"
NAME = "megatron-attention-heads"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "Megatron: attention heads divisible by tp; KV heads a multiple or divisor of tp."
SHEET_IDS = ('M5', 'M6')
FRAMEWORK = None  # None: verl and miles
DOC = """## What it does
M5 `num_attention_heads % tp == 0`; M6 `num_key_value_heads % tp == 0 or tp % num_key_value_heads == 0`
(megatron-core >= 0.16, which verl 0.8/0.9 and miles use).

## Why is this bad?
TransformerConfig rejects it while the actor model is built on the GPUs.

## Example
```yaml
global:
  cluster: {nodes: 1, gpusPerNode: 8}
  job:
    model: {preset: qwen2.5-7b}
    parallel: {tensor: 8}
```
Use instead:
```yaml
global:
  cluster: {nodes: 1, gpusPerNode: 8}
  job:
    model: {preset: qwen2.5-7b}
    parallel: {tensor: 4}
```

## Fix
Use a tensor parallel size that divides the heads (listed in the message).
"""


def check(ctx: LintContext) -> Iterator[Hit]:
    yield from hits(ctx, SHEET_IDS, FRAMEWORK)
