"""GRPO905 engine-gpu-memory."""

from __future__ import annotations

from collections.abc import Iterator

from ...catalog.instances import gpu_memory_mib
from ...catalog.models import MODELS
from ..finding import Hit, Severity

CODE = "GRPO905"
NAME = "engine-gpu-memory"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = ("The evaluation vLLM server's GPU memory share cannot hold its slice of the weights and one full-length "
           "sequence.")
DOC = """## What it does
For the evaluation server (vLLM, when `global.components.vllm` is on), compares the memory it may use on one GPU
(`vllm.gpuMemoryUtilization` of a `vllm.instanceType` GPU, from the instance catalogue) with what it must hold
there at the least over `vllm.tensorParallel` GPUs. The rollout engine of a training job is part of the whole
per-GPU memory model, GRPO920 (gpu-memory), which reports it once with the trainer beside it.

The lower bound is the model's bf16 weights split evenly over the tensor parallel GPUs (`global.job.model.preset`;
layers replicated on every rank only add to it) and, for vLLM, the KV cache of one sequence of its context
length (prompt + response, or `maxModelLen`): 2 x layers x KV heads per GPU x head size x 2 bytes per token.
Activations and CUDA graphs come on top, so a finding is a certain failure, and no finding is no promise.

## Why is this bad?
vLLM refuses to start when the KV cache cannot hold one request of its maximum length (`To serve at least one
request with the model's max seq len ... KV cache is needed, which is larger than the available KV cache
memory`), and both engines fail to load weights larger than their share (CUDA out of memory; SGLang: `Not
enough memory. Please try to increase --mem-fraction-static`). Either happens after the GPU nodes were
provisioned and the weights read, on every restart.

## Example
```yaml
global:
  job:
    model: {preset: qwen3-8b}
vllm:
  instanceType: g5.12xlarge
  tensorParallel: 1
  gpuMemoryUtilization: 0.8
```
Use instead:
```yaml
vllm:
  instanceType: g5.12xlarge
  tensorParallel: 2
  gpuMemoryUtilization: 0.8
```

## Fix
Raise the server's tensor parallel size or its memory utilisation, or pick an instance type with larger GPUs
(the message gives the numbers).
"""

BYTES = 2  # bf16 weights and KV cache (the engines' `auto` dtype for these bf16 checkpoints)
GIB = 2**30


def check(ctx) -> Iterator[Hit]:
    if not ctx.has_values:
        return
    model = MODELS.get(ctx.get("global.job.model.preset"))
    if model is None:
        return
    if ctx.component_enabled("vllm"):
        yield from _engine(model, "vLLM eval server", ctx.get("vllm.instanceType"), ctx.get("vllm.tensorParallel"),
                           ctx.get("vllm.gpuMemoryUtilization"), ctx.get("vllm.maxModelLen"), "vllm",
                           "vllm.instanceType", ctx)


def _engine(model, engine: str, instance, tp, utilization, context, section: str, type_key: str,
            ctx) -> Iterator[Hit]:
    from .capacity import node_type

    gpu_mib = gpu_memory_mib(instance, node_type(ctx, instance)) if isinstance(instance, str) else None
    if gpu_mib is None or not isinstance(tp, int) or tp < 1 or not isinstance(utilization, int | float):
        return  # an unknown type is GRPO601's / GRPO613's warning; bad numbers are the schema's
    budget = gpu_mib * 2**20 * utilization
    weights = model.parameters * BYTES / tp
    head_dim = model.head_dim or model.hidden_size // model.num_attention_heads
    kv_heads = max(1, model.num_key_value_heads // tp)  # fewer KV heads than GPUs: each GPU keeps one copy
    kv = 2 * model.num_layers * kv_heads * head_dim * BYTES * context if isinstance(context, int) else 0
    need = weights + kv
    if need <= budget:
        return
    held = f"{weights / GIB:.1f} GiB of {model.name} weights (1/{tp})" + \
        (f" + {kv / GIB:.1f} GiB KV cache for one {context}-token sequence" if kv else "")
    yield Hit(f"{section}.tensorParallel",
              f"{engine} needs at least {held} = {need / GIB:.1f} GiB on each GPU; {instance} GPUs have "
              f"{gpu_mib / 1024:.1f} GiB x gpuMemoryUtilization {utilization:g} = {budget / GIB:.1f} GiB: it "
              "cannot start", related=(f"{section}.gpuMemoryUtilization", type_key),
              remediation=f"raise {section}.tensorParallel or {section}.gpuMemoryUtilization, or use larger GPUs")
