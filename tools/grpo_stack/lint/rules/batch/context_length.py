"""GRPO313 rollout-context-length: R13, R14 of docs/batch-math.md."""

from __future__ import annotations

from collections.abc import Iterator

from ...context import LintContext
from ...finding import Hit, Severity
from ._shared import hits

CODE = "GRPO313"
NAME = "rollout-context-length"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "Rollout max_model_len must fit the model's context and hold prompt + response."
SHEET_IDS = ('R13', 'R14')
FRAMEWORK = 'verl'  # None: verl and miles
DOC = """## What it does
R13: `rollout.max_model_len <= max_position_embeddings` of the model (error); a max_model_len shorter than
`maxPrompt + maxResponse` silently truncates responses (warning). R14: without chunked prefill vLLM needs
`max_num_batched_tokens >= max_model_len`.

## Why is this bad?
vLLM refuses to start above the model's context. Below prompt + response, verl clamps max_tokens and the
longest responses are cut off without an error.

## Example
```yaml
global:
  job:
    model: {preset: qwen2.5-7b}
    lengths: {maxPrompt: 2048, maxResponse: 32768}
```
Use instead:
```yaml
global:
  job:
    model: {preset: qwen2.5-7b}
    lengths: {maxPrompt: 2048, maxResponse: 16384}
```

## Fix
Keep maxPrompt + maxResponse (or rollout.maxModelLen) within the model's max_position_embeddings.
"""


def check(ctx: LintContext) -> Iterator[Hit]:
    yield from hits(ctx, SHEET_IDS, FRAMEWORK)
