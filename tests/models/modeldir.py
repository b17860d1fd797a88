"""A small model directory in the Hub's layout, generated here: sharded safetensors with their index,
config.json (Qwen3-8B's shape) and tokenizer files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from safetensors.numpy import save_file

QWEN3_8B_CONFIG = {
    "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 4096, "num_hidden_layers": 36,
    "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 40960, "vocab_size": 151936,
    "torch_dtype": "bfloat16",
}
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def make_model(root: Path, config: dict | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    shards = {
        "model-00001-of-00002.safetensors": {"embed.weight": rng.standard_normal((64, 16)).astype(np.float32),
                                             "layer0.weight": rng.standard_normal((16, 16)).astype(np.float16)},
        "model-00002-of-00002.safetensors": {"lm_head.weight": rng.standard_normal((64, 16)).astype(np.float32)},
    }
    weight_map = {}
    for name, tensors in shards.items():
        save_file(tensors, str(root / name), metadata={"format": "pt"})
        weight_map.update({t: name for t in tensors})
    (root / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    (root / "config.json").write_text(json.dumps(config or QWEN3_8B_CONFIG))
    (root / "tokenizer.json").write_text(json.dumps({"version": "1.0", "model": {"type": "BPE"}}))
    (root / "tokenizer_config.json").write_text(json.dumps({"model_max_length": 40960}))
    (root / "generation_config.json").write_text(json.dumps({"temperature": 0.6}))
    return root


