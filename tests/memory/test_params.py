"""Parameter counts from config.json fields against the published sizes (tests/memory/configs.json, transcribed
from the shared reference models.md with its sources), and KV bytes per token against the engines' formulas."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from grpo_stack.catalog.models import MODELS
from grpo_stack.memory.arch import from_config, from_shape
from grpo_stack.memory.terms import kv_bytes_per_token

CONFIGS = {k: v for k, v in json.loads((Path(__file__).parent / "configs.json").read_text()).items()
           if not k.startswith("_")}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_parameter_count_matches_the_published_size(name):
    row = CONFIGS[name]
    total = from_config(row["config"]).total() / 1e9
    assert abs(total / row["published_b"] - 1) <= row["tolerance"], (name, total)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_catalogue_presets_count_their_published_size(name):
    """The presets' architecture columns give the size their `params_b` states (nominal names within 5 %)."""
    model = MODELS[name]
    assert abs(from_shape(model).total() / model.parameters - 1) <= 0.05, name


def test_kv_bytes_per_token_follow_vllm_and_sglang():
    """reference e5: Llama-3.1-8B at TP1 bf16 2*32*8*128*2 = 131072 B; DeepSeek-V3 MLA 61*(512+64)*2 = 70272 B;
    KV heads replicated when tp exceeds them (Qwen3-235B: 4 KV heads at TP8 keep one per rank)."""
    assert kv_bytes_per_token(from_config(CONFIGS["Llama-3.1-8B"]["config"]), 1) == 131072
    assert kv_bytes_per_token(from_config(CONFIGS["DeepSeek-V3"]["config"]), 8) == 70272
    assert kv_bytes_per_token(from_shape(MODELS["qwen3-235b-a22b"]), 8) == 2 * 94 * 1 * 128 * 2
