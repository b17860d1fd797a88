"""GRPO319 rollout-attention-heads: E1 of docs/batch-math.md."""

from __future__ import annotations

from collections.abc import Iterator

from ...context import LintContext
from ...finding import Hit, Severity
from ._shared import hits

CODE = "GRPO319"
NAME = "rollout-attention-heads"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "Rollout engine: heads divisible by rollout tp; KV heads split or replicated evenly."
SHEET_IDS = ('E1',)
FRAMEWORK = None  # None: verl and miles
DOC = """## What it does
vLLM (verl) and SGLang (miles, tp = GPUs per engine): `num_attention_heads % tp == 0`, and KV heads
`kv % tp == 0` when kv >= tp, else `tp % kv == 0`.

## Why is this bad?
The engine refuses to load the model (`Total number of attention heads must be divisible by tensor
parallel size`), after the cluster is up.

## Example
```yaml
global:
  job:
    model: {preset: qwen2.5-7b}
    rollout: {tensorParallel: 8}
```
Use instead:
```yaml
global:
  job:
    model: {preset: qwen2.5-7b}
    rollout: {tensorParallel: 4}
```

## Fix
Use a rollout tensor parallel size that divides the heads (listed in the message).
"""


def check(ctx: LintContext) -> Iterator[Hit]:
    yield from hits(ctx, SHEET_IDS, FRAMEWORK)
