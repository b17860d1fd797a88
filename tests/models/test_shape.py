"""The declared model shape read defensively: an explicit `global.job.model.shape` (in whichever spelling the
values use) wins over the preset; config.json fields are found at the top or under text_config."""

from __future__ import annotations

from grpo_stack.models.shape import declared, mismatches

from .modeldir import QWEN3_8B_CONFIG


def _values(model: dict) -> dict:
    return {"global": {"job": {"model": model}, "cluster": {}, "storage": {}}}


def test_explicit_shape_wins_over_the_preset():
    want, origin = declared(_values({"preset": "qwen3-4b", "shape": {
        "layers": 36, "hiddenSize": 4096, "heads": 32, "kvHeads": 8, "experts": 0, "vocab": 151936,
        "maxPositions": 40960}}))
    assert origin == "global.job.model.shape"
    assert mismatches(want, QWEN3_8B_CONFIG) == []


def test_preset_from_the_catalogue():
    want, origin = declared(_values({"preset": "qwen3-8b"}))
    assert origin == "global.job.model.preset 'qwen3-8b'"
    assert want == {"layers": 36, "hidden": 4096, "heads": 32, "kvHeads": 8, "experts": 0, "vocab": 151936,
                    "maxPositions": 40960}
    assert mismatches(want, QWEN3_8B_CONFIG) == []


def test_nested_text_config_and_expert_spellings():
    config = {"model_type": "x", "text_config": dict(QWEN3_8B_CONFIG, n_routed_experts=64)}
    want = {"layers": 36, "experts": 64}
    assert mismatches(want, config) == []
    assert mismatches({"experts": 128}, config) == ["experts: values declare 128, config.json num_experts = 64"]


def test_every_declared_fact_is_compared():
    want = {"layers": 40, "vocab": 1000}
    assert mismatches(want, QWEN3_8B_CONFIG) == [
        "layers: values declare 40, config.json num_hidden_layers = 36",
        "vocab: values declare 1000, config.json vocab_size = 151936",
    ]


def test_a_moe_config_fills_its_top_k(tmp_path):
    """`grpo-lint --model-config` reads num_experts_per_tok into expertsPerToken, which the memory model counts
    instead of every expert (values/qwen3-30b.yaml's preset numbers, Qwen3-30B-A3B config.json: 128 experts, 8 a
    token)."""
    import json

    from grpo_stack.catalog.hf_config import shape_from_config

    config = {"num_hidden_layers": 48, "hidden_size": 2048, "num_attention_heads": 32, "num_key_value_heads": 4,
              "num_experts": 128, "num_experts_per_tok": 8, "moe_intermediate_size": 768, "intermediate_size": 6144,
              "vocab_size": 151936, "max_position_embeddings": 40960, "head_dim": 128}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    shape = shape_from_config(str(path))
    assert shape["experts"] == 128 and shape["expertsPerToken"] == 8 and shape["intermediate"] == 768
    dense = {k: v for k, v in config.items() if not k.startswith(("num_experts", "moe_"))}
    path.write_text(json.dumps(dense))
    assert "expertsPerToken" not in shape_from_config(str(path))
