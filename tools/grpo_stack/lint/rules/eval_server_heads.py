"""GRPO902 eval-server-attention-heads."""

from __future__ import annotations

from collections.abc import Iterator

from ...batchmath.rollout import rollout_heads
from ...catalog.models import MODELS
from ..finding import Hit, Severity

CODE = "GRPO902"
NAME = "eval-server-attention-heads"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "The vLLM evaluation server's tensor parallel size does not split the model's attention heads."
DOC = """## What it does
When the vLLM evaluation server is enabled, applies the rollout engine's rule (E1 of docs/batch-math.md, the
check GRPO319 makes for training's rollout) to `vllm.tensorParallel`: the model's attention heads must divide by
it, and its KV heads must be split (kv % tp == 0) or replicated (tp % kv == 0) evenly. The model is
`global.job.model.preset` from the model catalog.

## Why is this bad?
vLLM refuses to load the model (`Total number of attention heads must be divisible by tensor parallel size`)
only after the GPU node was provisioned and the weights were read; the evaluation release then burns its
startup budget crash-looping.

## Example
```yaml
global:
  job:
    model: {preset: qwen2.5-7b}
vllm:
  tensorParallel: 8
```
Use instead:
```yaml
vllm:
  tensorParallel: 4
```

## Fix
Use a `vllm.tensorParallel` that divides the model's attention heads (the message names them).
"""


def check(ctx) -> Iterator[Hit]:
    if not ctx.has_values or not ctx.component_enabled("vllm"):
        return
    model = MODELS.get(ctx.get("global.job.model.preset"))
    if model is None:
        return
    tp = int(ctx.get("vllm.tensorParallel"))
    engine = f"vLLM eval server ({model.name})"
    for v in rollout_heads(model.num_attention_heads, model.num_key_value_heads, tp, engine):
        yield Hit("vllm.tensorParallel", v.message.replace("rollout tensor parallel", "vllm.tensorParallel"),
                  remediation="use a vllm.tensorParallel that divides the attention heads")
