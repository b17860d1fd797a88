"""A model's architecture and its parameter counts: from a catalogue shape or a Hugging Face config.json.

The counting follows Megatron-LM theoretical_memory_usage.py compute_weight_and_optimizer_memory (attention
L62-94, MLP and experts L95-171), with the projection biases and q/k norms it leaves out counted as well, so the
totals can be compared with published sizes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Arch:
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn: int  # dense MLP intermediate size
    vocab: int
    experts: int = 0  # routed experts per MoE layer
    moe_ffn: int = 0  # intermediate size of one routed expert
    topk: int = 0  # experts per token
    shared_ffn: int = 0  # shared-expert intermediate size (DeepSeek)
    dense_layers: int = 0  # leading dense layers of a MoE model (first_k_dense_replace)
    tied: bool = False
    qkv_bias: bool = False
    qk_norm: bool = False
    gated: bool = True  # SwiGLU: three matrices per MLP
    norm_params: int = 1  # per hidden unit: RMSNorm 1, LayerNorm 2 (weight + bias)
    # Multi-latent attention (DeepSeek); kv_lora_rank 0 means standard GQA.
    q_lora_rank: int = 0
    kv_lora_rank: int = 0
    qk_nope_dim: int = 0
    qk_rope_dim: int = 0
    v_head_dim: int = 0
    mtp_layers: int = 0
    topk_stated: bool = True  # False: a MoE shape without its top-k, counted at every expert (an upper bound)

    @property
    def moe_layers(self) -> int:
        return self.layers - self.dense_layers if self.experts else 0

    @property
    def mla(self) -> bool:
        return self.kv_lora_rank > 0

    def attention(self) -> int:
        """Parameters of one attention block (all ranks)."""
        h, a = self.hidden, self.heads
        if self.mla:  # Megatron L62-80
            qk = self.qk_nope_dim + self.qk_rope_dim
            q = (self.q_lora_rank * (h + a * qk + self.norm_params) if self.q_lora_rank else h * a * qk)
            kv = self.kv_lora_rank * (h + a * (self.qk_nope_dim + self.v_head_dim) + self.norm_params)
            return q + kv + h * self.qk_rope_dim + a * self.v_head_dim * h
        q, kv = a * self.head_dim, self.kv_heads * self.head_dim
        out = h * (q + 2 * kv) + q * h  # Megatron L81-94: 2h^2(1 + g/a)(a*hd/h)
        if self.qkv_bias:
            out += q + 2 * kv
        if self.qk_norm:
            out += 2 * self.head_dim
        return out

    def mlp(self, width: int) -> int:
        return (3 if self.gated else 2) * self.hidden * width

    def dense_layer(self) -> int:
        return self.attention() + self.mlp(self.ffn) + 2 * self.norm_params * self.hidden

    def moe_layer_dense_part(self) -> int:
        """The replicated (non-expert) parameters of a MoE layer: attention, shared experts, router, norms."""
        return (self.attention() + (self.mlp(self.shared_ffn) if self.shared_ffn else 0) + self.hidden * self.experts
                + 2 * self.norm_params * self.hidden)

    def moe_layer_experts(self) -> int:
        return self.experts * self.mlp(self.moe_ffn)

    def embedding(self) -> int:
        return self.vocab * self.hidden

    def block_dense(self) -> int:
        """Non-expert parameters of the transformer block (final norm included)."""
        dense = self.dense_layers if self.experts else self.layers
        return dense * self.dense_layer() + self.moe_layers * self.moe_layer_dense_part() + \
            self.norm_params * self.hidden

    def block_experts(self) -> int:
        return self.moe_layers * self.moe_layer_experts()

    def total(self) -> int:
        """Parameters of the model as published (MTP modules not included)."""
        return self.block_dense() + self.block_experts() + self.embedding() * (1 if self.tied else 2)

    def active_per_token_ffn(self) -> int:
        """MLP width a token goes through per layer (routed top-k plus shared experts, or the dense FFN)."""
        if not self.experts:
            return self.ffn
        return self.topk * self.moe_ffn + self.shared_ffn

    def linears(self) -> list[tuple[int, int, int, bool]]:
        """(in, out, copies per layer, routed expert) of every linear a LoRA `all-linear` adapts."""
        h, q, kv = self.hidden, self.heads * self.head_dim, self.kv_heads * self.head_dim
        out = [(h, q, 1, False), (h, kv, 2, False), (q, h, 1, False)]
        width = self.moe_ffn if self.experts else self.ffn
        copies = self.experts or 1
        expert = bool(self.experts)
        out += [(h, width, (2 if self.gated else 1) * copies, expert), (width, h, copies, expert)]
        return out


def from_shape(shape: Any) -> Arch:
    """A catalogue ModelShape (catalog/models.py) or a values `model.shape` -> Arch. A MoE shape's
    intermediate size is per expert and every layer is a MoE layer (Qwen3 MoE: `mlp_only_layers: []`)."""
    h = shape.hidden_size
    head_dim = shape.head_dim or h // shape.num_attention_heads
    moe = shape.num_experts > 0
    ffn = shape.intermediate_size or 4 * h
    return Arch(layers=shape.num_layers, hidden=h, heads=shape.num_attention_heads,
                kv_heads=shape.num_key_value_heads, head_dim=head_dim, ffn=0 if moe else ffn,
                vocab=shape.vocab_size or 0, experts=shape.num_experts, moe_ffn=ffn if moe else 0,
                # top-k unknown: count all experts' activations, an upper bound
                topk=(getattr(shape, "experts_per_token", 0) or shape.num_experts) if moe else 0,
                topk_stated=not moe or bool(getattr(shape, "experts_per_token", 0)),
                tied=bool(getattr(shape, "tie_word_embeddings", False)),
                qkv_bias=bool(getattr(shape, "attention_bias", False)))


def _int(config: dict, *keys: str, default: int = 0) -> int:
    for k in keys:
        if isinstance(config.get(k), int) and not isinstance(config.get(k), bool):
            return config[k]
    return default


def from_config(config: dict[str, Any]) -> Arch:
    """A Hugging Face config.json (its text_config when multimodal) -> Arch."""
    c = config.get("text_config") if isinstance(config.get("text_config"), dict) else config
    h = _int(c, "hidden_size")
    heads = _int(c, "num_attention_heads")
    experts = _int(c, "num_experts", "num_local_experts", "n_routed_experts")
    mtype = str(c.get("model_type", ""))
    gated = str(c.get("hidden_act", "silu")) in ("silu", "swiglu", "swish")
    shared = (_int(c, "n_shared_experts") * _int(c, "moe_intermediate_size")
              or _int(c, "shared_expert_intermediate_size"))
    return Arch(
        layers=_int(c, "num_hidden_layers", "n_layer", "num_layers"), hidden=h, heads=heads,
        kv_heads=_int(c, "num_key_value_heads", default=heads), head_dim=_int(c, "head_dim", default=h // heads),
        ffn=_int(c, "intermediate_size", default=4 * h), vocab=_int(c, "vocab_size"), experts=experts,
        moe_ffn=_int(c, "moe_intermediate_size", default=_int(c, "intermediate_size")) if experts else 0,
        topk=_int(c, "num_experts_per_tok", default=experts), shared_ffn=shared,
        dense_layers=_int(c, "first_k_dense_replace") if experts else 0,
        tied=bool(c.get("tie_word_embeddings", False)),
        # Qwen2 attention has q/k/v biases without a config flag; others say attention_bias
        qkv_bias=bool(c.get("attention_bias", mtype == "qwen2")), qk_norm=mtype.startswith("qwen3"), gated=gated,
        q_lora_rank=_int(c, "q_lora_rank"), kv_lora_rank=_int(c, "kv_lora_rank"),
        qk_nope_dim=_int(c, "qk_nope_head_dim"), qk_rope_dim=_int(c, "qk_rope_head_dim"),
        v_head_dim=_int(c, "v_head_dim"), mtp_layers=_int(c, "num_nextn_predict_layers"))
