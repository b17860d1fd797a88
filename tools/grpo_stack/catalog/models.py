"""Model architecture facts for parallelism rules, each row with its sources.

Sources (see docs/models.md for the full key): S1 citsjtu2020/LLM-Prof@8434c8d sglang/Model_Config.md (verbatim
HF config.json dumps); S2 AI-Hypercomputer/maxtext@e591f30 hf_model_configs.py; S3 pytorch/torchtune@bd2a0fc
model builders; S4 NVIDIA-NeMo/Megatron-Bridge@5ca1c1a qwen_provider.py; S6 QwenLM blog tables; S19 the
Qwen3-235B-A22B model card; S20 Qwen2.5-72B-Instruct config.json copy; S22 MindSpeed-RL qwen3_235b_a22b.yaml.
`max_position_embeddings` is the post-trained / instruct value (Qwen3 base: 32768; Qwen2.5 base: 131072).
"""

from __future__ import annotations

from dataclasses import dataclass


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

    @property
    def is_moe(self) -> bool:
        return self.num_experts > 0


_MODELS = [
    ModelShape("qwen3-4b", "Qwen/Qwen3-4B", 36, 2560, 32, 8, 0, 40960, "S1; S2 L554-568; S4 L310-319; S6"),
    ModelShape("qwen3-8b", "Qwen/Qwen3-8B", 36, 4096, 32, 8, 0, 40960, "S1; S2 L570-584; S4 L323-331; S6"),
    ModelShape(
        "qwen3-30b-a3b", "Qwen/Qwen3-30B-A3B", 48, 2048, 32, 4, 128, 40960, "S1; S2 L722-757; S4 L364-411; S6"
    ),
    ModelShape(
        "qwen3-235b-a22b", "Qwen/Qwen3-235B-A22B", 94, 4096, 64, 4, 128, 40960, "S4 L364-393, L415-425; S19; S22"
    ),
    ModelShape("qwen2.5-7b", "Qwen/Qwen2.5-7B-Instruct", 28, 3584, 28, 4, 0, 32768, "S1; S2 L487-503; S3 L135-183"),
    ModelShape("qwen2.5-72b", "Qwen/Qwen2.5-72B-Instruct", 80, 8192, 64, 8, 0, 32768, "S3 L291-339; S4 L236-248; S20"),
    ModelShape("llama-3.1-8b", "meta-llama/Llama-3.1-8B", 32, 4096, 32, 8, 0, 131072, "S1; S2 L619-648; S3 L20-37"),
]

MODELS: dict[str, ModelShape] = {m.name: m for m in _MODELS}
