"""GRPO502 token-budget."""

from __future__ import annotations

from collections.abc import Iterator

from ...catalog.models import MODELS
from ..finding import Hit, Severity

CODE = "GRPO502"
NAME = "token-budget"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "The evaluation server's context is shorter than what training generates or lm-eval asks for."
DOC = """## What it does
When the vLLM evaluation server is enabled, requires `vllm.maxModelLen` to be at least the training budget
`global.job.lengths.maxPrompt + maxResponse` (which is also the context lm-eval asks for: the chart derives it
from the same two values), and no more than the model's `max_position_embeddings` (from the model catalog).

## Why is this bad?
The predecessor's eval server defaulted to 12288 tokens while training generated up to 2048 + 24576 = 26624:
evaluation censored long answers (a truncated response has no `\\boxed{}`) and scores were not comparable
with training. When the server allows less than lm-eval requests, requests fail outright.

## Example
```yaml
vllm:
  maxModelLen: 12288
```
Use instead:
```yaml
vllm:
  maxModelLen: 32768
```

## Fix
Raise `vllm.maxModelLen` to cover both budgets (and keep it within the model's context).
"""


def check(ctx) -> Iterator[Hit]:
    if not ctx.has_values or not ctx.component_enabled("vllm"):
        return
    served = int(ctx.get("vllm.maxModelLen"))
    train = int(ctx.get("global.job.lengths.maxPrompt")) + int(ctx.get("global.job.lengths.maxResponse"))
    if served < train:
        prompt, response = ctx.get("global.job.lengths.maxPrompt"), ctx.get("global.job.lengths.maxResponse")
        yield Hit("vllm.maxModelLen", f"vllm.maxModelLen {served} < training budget {train} (maxPrompt {prompt} + "
                  f"maxResponse {response}); evaluation would truncate what training generates",
                  remediation=f"set vllm.maxModelLen >= {train}", related=("global.job.lengths.maxResponse",))
    model = MODELS.get(ctx.get("global.job.model.preset"))
    if model and served > model.max_position_embeddings:
        yield Hit("vllm.maxModelLen", f"vllm.maxModelLen {served} > {model.name} max_position_embeddings "
                  f"{model.max_position_embeddings}; vLLM refuses to start",
                  remediation=f"set vllm.maxModelLen <= {model.max_position_embeddings}")
