"""A model's architecture and its parameter counts: from a catalogue shape, a Hugging Face config.json, or the
model arguments a Megatron command spells (miles' MODEL_ARGS).

The counting follows Megatron-LM theoretical_memory_usage.py compute_weight_and_optimizer_memory (attention
L62-94, MLP and experts L95-171), with the projection biases and q/k norms it leaves out counted as well, so the
totals can be compared with published sizes.
"""

from __future__ import annotations

import ast
import math
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


def int_arg(v: dict[str, Any], key: str, default: Any = None) -> Any:
    """An argument's number as an int (a value the parser read as a float too), else `default`."""
    value = v.get(key, default)
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else default


def float_arg(v: dict[str, Any], key: str, default: float) -> float:
    """An argument's number as a float, else `default` (an unset or non-numeric value, such as a shell variable
    a manifest's command leaves unexpanded)."""
    value = v.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return default
    try:
        number = float(value)
    except ValueError:
        return default
    return number if math.isfinite(number) else default


def moe_pattern(freq: Any, layers: int) -> list[int] | None:
    """Megatron's --moe-layer-freq -> one 0 (dense) or 1 (MoE) per layer: an integer N puts a MoE layer every N
    layers, starting with the first; a list expression such as "([0]*3+[1]*58)" is the pattern itself
    (arguments.py moe_freq_type, read here without eval: only lists of 0/1, + and * by integers). None when it
    is neither, or its length is not the model's layers."""
    if isinstance(freq, int) and not isinstance(freq, bool) and freq > 0:
        return [1 if i % freq == 0 else 0 for i in range(layers)]
    if not isinstance(freq, str):
        return None
    freq = freq.strip().strip("'\"")  # scripts quote the pattern twice: --moe-layer-freq "'([1]*48)'"
    if freq.isdigit():
        return moe_pattern(int(freq), layers)

    def value(node: ast.AST) -> Any:
        if isinstance(node, ast.List) and all(isinstance(e, ast.Constant) and e.value in (0, 1) for e in node.elts):
            return [e.value for e in node.elts]
        if isinstance(node, ast.Constant) and type(node.value) is int and 0 <= node.value <= 100_000:
            return node.value
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mult):
            left, right = value(node.left), value(node.right)
            if isinstance(node.op, ast.Add) and isinstance(left, list) and isinstance(right, list):
                return left + right
            if isinstance(node.op, ast.Mult) and isinstance(left, list) and isinstance(right, int):
                return left * right
        raise ValueError(freq)

    try:
        pattern = value(ast.parse(freq.strip(), mode="eval").body)
    except (SyntaxError, ValueError, RecursionError):
        return None
    return pattern if isinstance(pattern, list) and len(pattern) == layers else None


def from_megatron_args(v: dict[str, Any]) -> Arch | None:
    """Megatron's model arguments ({flag without dashes: value, bare flags True}, as a miles command spells its
    MODEL_ARGS) -> Arch, with Megatron's defaults for what they leave out (megatron/training/arguments.py and
    core/transformer/transformer_config.py @d98e8a64): ffn 4h (SwiGLU: 8h/3 rounded down to a multiple of 64,
    arguments.py L1320-1329), kv channels h / heads (L1331-1333), LayerNorm, tied embeddings unless
    --untie-embeddings-and-output-weights, biases on unless --disable-bias-linear, top-2 routing, every layer MoE
    (--moe-layer-freq 1), MLA's kv-lora-rank 32, qk-head-dim 128, qk-pos-emb-head-dim 64, v-head-dim 128
    (L3548-3556). The vocabulary is padded as Megatron pads it: to a multiple of --make-vocab-size-divisible-by
    (128) x tensor parallel (training/vocab_utils.py L58). None when the layers, hidden size, heads or vocabulary
    are not stated (the tokenizer's size is not guessed), or --moe-layer-freq cannot be read."""
    layers, hidden, heads, vocab = (int_arg(v, k) for k in ("num-layers", "hidden-size", "num-attention-heads",
                                                         "vocab-size"))
    if not (layers and hidden and heads and vocab) or hidden % heads and not int_arg(v, "kv-channels"):
        return None
    multiple = ((int_arg(v, "make-vocab-size-divisible-by", 128) or 128)
                * (int_arg(v, "tensor-model-parallel-size", 1) or 1))
    gated = v.get("swiglu") is True
    ffn = int_arg(v, "ffn-hidden-size") or (int(4 * hidden * 2 / 3 / 64) * 64 if gated else 4 * hidden)
    experts = int_arg(v, "num-experts", 0) or 0
    dense_layers = 0
    if experts:
        pattern = moe_pattern(v.get("moe-layer-freq", 1), layers)
        if pattern is None:
            return None
        dense_layers = pattern.count(0)
    mla = v.get("multi-latent-attention") is True
    return Arch(
        layers=layers, hidden=hidden, heads=heads,
        kv_heads=(int_arg(v, "num-query-groups") or heads) if v.get("group-query-attention") is True else heads,
        head_dim=int_arg(v, "kv-channels") or hidden // heads, ffn=ffn, vocab=-(-vocab // multiple) * multiple,
        experts=experts, moe_ffn=(int_arg(v, "moe-ffn-hidden-size") or ffn) if experts else 0,
        topk=(int_arg(v, "moe-router-topk", 2) or 2) if experts else 0,
        shared_ffn=int_arg(v, "moe-shared-expert-intermediate-size", 0) or 0 if experts else 0,
        dense_layers=dense_layers, tied=v.get("untie-embeddings-and-output-weights") is not True,
        qkv_bias=v.get("add-qkv-bias") is True or v.get("disable-bias-linear") is not True,
        qk_norm=v.get("qk-layernorm") is True, gated=gated,
        norm_params=1 if str(v.get("normalization", "LayerNorm")).strip("'\"") == "RMSNorm" else 2,
        q_lora_rank=(int_arg(v, "q-lora-rank", 0) or 0) if mla else 0,
        kv_lora_rank=(int_arg(v, "kv-lora-rank", 32) or 32) if mla else 0,
        qk_nope_dim=(int_arg(v, "qk-head-dim", 128) or 128) if mla else 0,
        qk_rope_dim=(int_arg(v, "qk-pos-emb-head-dim", 64) or 64) if mla else 0,
        v_head_dim=(int_arg(v, "v-head-dim", 128) or 128) if mla else 0,
        mtp_layers=int_arg(v, "mtp-num-layers", 0) or 0)
