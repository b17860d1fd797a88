"""GRPO310 dynamic-batch-token-budget: R6, S16, S17 of docs/batch-math.md."""

from __future__ import annotations

from collections.abc import Iterator

from ...context import LintContext
from ...finding import Hit, Severity
from ._shared import hits

CODE = "GRPO310"
NAME = "dynamic-batch-token-budget"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "Dynamic batch size: the longest sequence must fit the per-GPU token budget."
SHEET_IDS = ('R6', 'S16', 'S17')
FRAMEWORK = None  # None: verl and miles
DOC = """## What it does
verl: `ppo_max_token_len_per_gpu * S >= max_prompt + max_response` (S = Ulysses sp or Megatron cp), also
for the log-prob budget (R6). miles: `--max-tokens-per-gpu` must be set (S16) and `max_tokens_per_gpu * cp`
must hold the longest sample (S17).

## Why is this bad?
verl asserts it in the micro-batch packer at the first update (`max_token_len must be greater than the
sequence length`). In miles a sample longer than the budget cannot be packed.

## Example
```yaml
global:
  job:
    lengths: {maxPrompt: 1024, maxResponse: 8192}
    verl:
      batch: {useDynamicBsz: true, ppoMaxTokenLenPerGpu: 4096}
```
Use instead:
```yaml
global:
  job:
    lengths: {maxPrompt: 1024, maxResponse: 8192}
    verl:
      batch: {useDynamicBsz: true, ppoMaxTokenLenPerGpu: 16384}
```

## Fix
Raise the token budget to at least max_prompt + max_response (divided by sp or cp).
"""


def check(ctx: LintContext) -> Iterator[Hit]:
    yield from hits(ctx, SHEET_IDS, FRAMEWORK)
