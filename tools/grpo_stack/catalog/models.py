"""Model architecture facts for parallelism rules, each row with its sources.

Sources (see docs/models.md for the full key): S1 citsjtu2020/LLM-Prof@8434c8d sglang/Model_Config.md (verbatim
HF config.json dumps); S2 AI-Hypercomputer/maxtext@e591f30 hf_model_configs.py; S3 pytorch/torchtune@bd2a0fc
model builders; S4 NVIDIA-NeMo/Megatron-Bridge@5ca1c1a qwen_provider.py; S6 QwenLM blog tables; S19 the
Qwen3-235B-A22B model card; S20 Qwen2.5-72B-Instruct config.json copy; S22 MindSpeed-RL qwen3_235b_a22b.yaml.
`max_position_embeddings` is the post-trained / instruct value (Qwen3 base: 32768; Qwen2.5 base: 131072).
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class ModelShape:
    name: str
    hf_id: str
    num_layers: int
    hidden_size: int
    num_attention_heads: int
    num_key_value_heads: int
    num_experts: int  # routed experts; 0 for dense models
    max_position_embeddings: int
    source: str
    # Parameter count (billions) from the model card / blog (sources above); None: estimated.
    params_b: float | None = None
    vocab_size: int | None = None
    intermediate_size: int | None = None  # one MLP; per expert for MoE (moe_intermediate_size)
    head_dim: int | None = None  # None: hidden_size / num_attention_heads
    tie_word_embeddings: bool = False  # one matrix for the input embedding and the output layer
    attention_bias: bool = False  # q/k/v projections with a bias (Qwen2 / Qwen2.5)
    experts_per_token: int = 0  # num_experts_per_tok (MoE routing top-k); 0 for dense models

    @property
    def is_moe(self) -> bool:
        return self.num_experts > 0

    @property
    def parameters(self) -> float:
        """Total parameters: the sourced count, else estimated from the shape (untied embeddings, GQA attention,
        SwiGLU MLPs of three matrices per expert; norms and biases ignored)."""
        if self.params_b is not None:
            return self.params_b * 1e9
        h = self.hidden_size
        hd = self.head_dim or h // self.num_attention_heads
        heads, kv = self.num_attention_heads, self.num_key_value_heads
        attention = h * hd * (heads + 2 * kv) + heads * hd * h
        mlp = 3 * h * (self.intermediate_size or 4 * h) * max(1, self.num_experts) + h * self.num_experts
        return 2 * (self.vocab_size or 0) * h + self.num_layers * (attention + mlp)


# Architecture columns (FFN / mFFN, V, hd, tie, k, qkv bias) are models.md's, read from the same sources.
_MODELS = [
    ModelShape("qwen3-4b", "Qwen/Qwen3-4B", 36, 2560, 32, 8, 0, 40960, "S1; S2 L554-568; S4 L310-319; S6",
               vocab_size=151936, intermediate_size=9728, head_dim=128, tie_word_embeddings=True),
    ModelShape("qwen3-8b", "Qwen/Qwen3-8B", 36, 4096, 32, 8, 0, 40960, "S1; S2 L570-584; S4 L323-331; S6",
               vocab_size=151936, intermediate_size=12288, head_dim=128),
    ModelShape("qwen3-30b-a3b", "Qwen/Qwen3-30B-A3B", 48, 2048, 32, 4, 128, 40960,
               "S1; S2 L722-757; S4 L364-411; S6", vocab_size=151936, intermediate_size=768, head_dim=128,
               experts_per_token=8),
    ModelShape("qwen3-235b-a22b", "Qwen/Qwen3-235B-A22B", 94, 4096, 64, 4, 128, 40960,
               "S4 L364-393, L415-425; S19; S22", vocab_size=151936, intermediate_size=1536, head_dim=128,
               experts_per_token=8),
    ModelShape("qwen2.5-7b", "Qwen/Qwen2.5-7B-Instruct", 28, 3584, 28, 4, 0, 32768, "S1; S2 L487-503; S3 L135-183",
               vocab_size=152064, intermediate_size=18944, head_dim=128, attention_bias=True),
    ModelShape("qwen2.5-72b", "Qwen/Qwen2.5-72B-Instruct", 80, 8192, 64, 8, 0, 32768,
               "S3 L291-339; S4 L236-248; S20", vocab_size=152064, intermediate_size=29568, head_dim=128,
               attention_bias=True),
    ModelShape("llama-3.1-8b", "meta-llama/Llama-3.1-8B", 32, 4096, 32, 8, 0, 131072, "S1; S2 L619-648; S3 L20-37",
               vocab_size=128256, intermediate_size=14336, head_dim=128),
]

# Total parameters in billions: the model cards and release blogs (sources S1-S22 above).
PARAMS_B = {"qwen3-4b": 4.0, "qwen3-8b": 8.0, "qwen3-30b-a3b": 30.0, "qwen3-235b-a22b": 235.0, "qwen2.5-7b": 7.61,
            "qwen2.5-72b": 72.7, "llama-3.1-8b": 8.0}

MODELS: dict[str, ModelShape] = {m.name: replace(m, params_b=PARAMS_B[m.name]) for m in _MODELS}
