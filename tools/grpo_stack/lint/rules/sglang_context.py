"""GRPO906 sglang-context-length."""

from __future__ import annotations

from collections.abc import Iterator

from ...catalog.models import MODELS
from ..finding import Hit, Severity

CODE = "GRPO906"
NAME = "sglang-context-length"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "miles' SGLang rollout cannot hold maxPrompt + maxResponse within the model's context length."
DOC = """## What it does
Under `global.job.framework: miles`, compares `global.job.lengths.maxPrompt + maxResponse` with the model's
`max_position_embeddings` (`global.job.model.preset`): the builder passes no `--context-length`, so SGLang's
context is the model's. The verl side (vLLM's `max_model_len`) is GRPO313's.

## Why is this bad?
miles asks SGLang for `max_new_tokens = maxResponse` on every prompt. SGLang refuses a request whose prompt
plus `max_new_tokens` reaches its context length (`Requested token count exceeds the model's maximum context
length`), so the longest prompts, or with a response budget beyond the context all of them, fail in the middle
of the rollout after the cluster and the weights are up; with automatic truncation on, the responses are
silently cut below the budget the batch rules and the evaluation assume.

## Example
```yaml
global:
  job:
    framework: miles
    model: {preset: qwen3-4b}   # 40960 positions
    lengths: {maxPrompt: 2048, maxResponse: 40960}
```
Use instead:
```yaml
global:
  job:
    lengths: {maxPrompt: 2048, maxResponse: 36864}
```

## Fix
Lower `global.job.lengths.maxResponse` (or `maxPrompt`) until their sum is below the model's context length.
"""


def check(ctx) -> Iterator[Hit]:
    if not ctx.has_values or ctx.get("global.job.framework") != "miles":
        return
    model = MODELS.get(ctx.get("global.job.model.preset"))
    prompt, response = ctx.get("global.job.lengths.maxPrompt"), ctx.get("global.job.lengths.maxResponse")
    if model is None or not isinstance(prompt, int) or not isinstance(response, int):
        return
    if prompt + response >= model.max_position_embeddings:
        yield Hit("global.job.lengths.maxResponse",
                  f"maxPrompt {prompt} + maxResponse {response} = {prompt + response} reaches {model.name}'s context "
                  f"of {model.max_position_embeddings} positions: SGLang refuses (or truncates) the requests whose "
                  "prompt plus max_new_tokens do not fit",
                  remediation=f"keep maxPrompt + maxResponse below {model.max_position_embeddings}",
                  related=("global.job.lengths.maxPrompt", "global.job.model.preset"))
