"""The pure formulas of grpo_stack.batchmath, on the numbers of the reviews and of the formula sheet."""

from __future__ import annotations

from grpo_stack.batchmath import (
    WARNING,
    MilesShape,
    ModelDims,
    VerlShape,
    check_miles,
    check_verl,
    megatron,
    miles,
    nearest,
    verl,
    with_alternatives,
)

QWEN72B = ModelDims(layers=80, heads=64, kv_heads=8, experts=0, max_position_embeddings=32768)


def ids(violations) -> set[str]:
    return {v.rule_id for v in violations}


def shape(**kw) -> VerlShape:
    base = dict(version="0.9.1", backend="megatron", model=QWEN72B, nnodes=6, gpus_per_node=8,
                train_batch_size=192, n=4, mini=24, micro=2, log_prob_micro=4, ref_log_prob_micro=4, tp=4, pp=4,
                rollout_tp=8, max_prompt=2048, max_response=8192)
    return VerlShape(**{**base, **kw})


def test_reviewed_72b_dp3_message_and_alternatives():
    """Review: qwen25-72b TP4/PP4, 48 GPUs, B=256, n=8, m=1 fails V2 (batch-math.md worked example);
    the message suggests 240 or 288, the example the issue asked for."""
    s = shape(train_batch_size=256, n=8, mini=48, micro=1, log_prob_micro=2, ref_log_prob_micro=2)
    found = with_alternatives(s, check_verl(s), check_verl)
    v2 = next(v for v in found if v.rule_id == "V2")
    assert v2.message.startswith("train_batch_size=256 x n=8 = 2048 rows are not divisible by the minimal batch 3")
    assert v2.alternatives == (240, 288)


def test_sheet_gap_r1_passes_startup_and_crashes_at_runtime():
    """batch-math.md section 2: B=240, M=40, n=8 at dp=3 passes validate_config but fails R1."""
    s = shape(train_batch_size=240, n=8, mini=40, micro=1)
    assert ids(check_verl(s)) & {"V1", "V2", "V3"} == set()
    assert "R1" in ids(check_verl(s))


def test_v1_trainer_pads_and_legacy_crashes():
    assert ids(verl.step_split(256, 4, 3, 24, v1_trainer=False)) == {"R4"}
    padded = verl.step_split(256, 4, 3, 24, v1_trainer=True)
    assert padded[0].severity == WARNING and "32 synthetic samples" in padded[0].message
    assert ids(verl.step_split(128, 8, 8, 48, v1_trainer=False)) == {"R3"}


def test_verl_080_has_no_v1_padding():
    assert not shape(version="0.8.0").v1_trainer
    assert "R4" in ids(check_verl(shape(version="0.8.0", train_batch_size=256)))


def test_dynamic_batch_skips_startup_checks():
    """batch-math.md: 48 GPUs, B=256, n=5, dynamic -> validate_config passes; only runtime rules apply."""
    s = shape(train_batch_size=256, n=5, dynamic=True, log_prob_dynamic=True, max_token_len=16384,
              log_prob_max_token_len=16384, micro=None, log_prob_micro=None, ref_log_prob_micro=None)
    assert not {i for i in ids(check_verl(s)) if i.startswith("V")}


def test_megatron_rules():
    assert ids(megatron.attention_heads(28, 4, 8)) == {"M5"}
    assert not megatron.attention_heads(64, 8, 16)  # KV heads may divide tp (core >= 0.16)
    assert ids(megatron.attention_heads(64, 8, 16, kv_divisor_ok=False)) == {"M6"}
    assert ids(megatron.layers(94, 4, None)) == {"M8"}
    assert ids(megatron.layers(80, 4, 3)) == {"M8"}
    assert ids(megatron.layers(80, 1, 2)) == {"M2"}
    assert ids(megatron.expert_world(48, 4, 1, 8, 4)) == {"M3"}
    assert ids(megatron.experts(0, 2)) == {"M7"}
    assert megatron.sequence_parallel(True, 1)[0].severity == WARNING
    assert ids(megatron.microbatches(256, 1, 12)) == {"M11"}


def test_miles_rules():
    assert ids(miles.rollout_samples(16, 8, 256)) == {"S2"}
    trimmed = miles.rollout_samples(40, 8, 256)
    assert trimmed[0].severity == WARNING and "64 are trimmed" in trimmed[0].message
    assert ids(miles.context_parallel_seq(4096, 3)) == {"S7"}
    assert ids(miles.steps_per_rollout(32, 8, 2, 256)) == {"S1"}
    idle = miles.placement(2, 8, True, None, 16, 3)
    assert idle[0].severity == WARNING and "1 GPUs stay idle" in idle[0].message
    assert ids(miles.placement(2, 8, False, 2, 0, 8)) == {"S11"}
    s = MilesShape(model=ModelDims(36, 32, 8, 0, 40960), nodes=3, gpus_per_node=8, colocate=True, actor_nodes=3,
                   rollout_gpus=None, rollout_tp=2, rollout_batch=32, k=8, global_batch=256, tp=2)
    assert ids(check_miles(s)) == {"S3"}
    assert with_alternatives(s, check_miles(s), check_miles)[0].alternatives == (240, 252)


def test_nearest():
    assert nearest(256, lambda v: v % 48 == 0) == [240, 288]
    assert nearest(3, lambda v: v >= 10, count=1) == [10]
    assert nearest(5, lambda v: False) == []
