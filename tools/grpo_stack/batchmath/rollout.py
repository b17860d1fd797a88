"""Inference-engine (vLLM, SGLang) tensor-parallel rules (batch-math.md section 5, E1)."""

from __future__ import annotations

from .core import Violation, violation


def rollout_heads(heads: int, kv_heads: int, tp: int, engine: str) -> list[Violation]:
    """E1: heads % tp; KV heads are split (kv >= tp: kv % tp) or replicated (kv < tp: tp % kv)."""
    out = []
    if heads % tp:
        out.append(violation("E1", f"{engine}: {heads} attention heads are not divisible by rollout tensor parallel "
                                   f"size {tp}", "rollout_tp"))
    if (kv_heads >= tp and kv_heads % tp) or (kv_heads < tp and tp % kv_heads):
        out.append(violation("E1", f"{engine}: {kv_heads} KV heads can be neither split nor replicated over rollout "
                                   f"tensor parallel size {tp}", "rollout_tp"))
    return out
