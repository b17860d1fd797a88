"""Smoke tests of the oracle tier: verl 0.9.1 / megatron-core 0.16.1 reproduce the cases in batch-math.md."""

from __future__ import annotations

import pytest

from .client import FAKEMODEL_DIR

pytestmark = pytest.mark.oracle

MICRO = [
    "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1",
    "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=2",
    "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=2",
]
QWEN72B_TP4_PP4_48GPU = [
    "actor_rollout_ref.model.path=/nonexistent/Qwen2.5-72B",
    "actor_rollout_ref.rollout.name=vllm",
    "algorithm.adv_estimator=grpo",
    "trainer.nnodes=6",
    "trainer.n_gpus_per_node=8",
    "actor_rollout_ref.actor.megatron.tensor_model_parallel_size=4",
    "actor_rollout_ref.actor.megatron.pipeline_model_parallel_size=4",
    "actor_rollout_ref.rollout.tensor_model_parallel_size=8",
    "actor_rollout_ref.rollout.n=8",
    *MICRO,
]
FSDP_8GPU = [
    "actor_rollout_ref.model.path=/nonexistent/Qwen2.5-7B",
    "actor_rollout_ref.rollout.name=vllm",
    "algorithm.adv_estimator=grpo",
    "trainer.n_gpus_per_node=8",
    "data.train_batch_size=256",
    "actor_rollout_ref.actor.ppo_mini_batch_size=64",
    "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4",
    "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=8",
    "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=8",
]


def _megatron(*extra: str) -> dict:
    return {"id": "mcore", "config_name": "ppo_megatron_trainer", "overrides": [*QWEN72B_TP4_PP4_48GPU, *extra]}


def _fsdp(*extra: str, **fields) -> dict:
    return {"id": "fsdp", "config_name": "ppo_trainer", "overrides": [*FSDP_8GPU, *extra], **fields}


def _check(result: dict, check: str, role: str = "actor") -> dict:
    found = [c for c in result["runtime"] if c["check"] == check and c["role"] == role]
    assert len(found) == 1, result["runtime"]
    return found[0]


def _assert_clean(result: dict) -> None:
    assert result["worker_error"] is None, result["worker_error"]
    assert result["compose_error"] is None, result["compose_error"]


def _assert_runtime_ok(result: dict) -> None:
    bad = [c for c in result["runtime"] if c["ok"] is not True]
    assert not bad, bad


# ---------------------------------------------------------------- batch-math.md §2 worked example


def test_qwen72b_b256_fails_startup_v2(verl_oracle):
    result = verl_oracle.ask_one(
        _megatron("data.train_batch_size=256", "actor_rollout_ref.actor.ppo_mini_batch_size=64")
    )
    _assert_clean(result)
    assert result["startup"]["ok"] is False
    assert result["startup"]["error_type"] == "AssertionError"
    assert result["startup"]["message"] == (
        "real_train_batch_size (2048) must be divisible by minimal possible batch size (3)"
    )
    assert result["context"]["actor"]["dp"] == 3


def test_qwen72b_b240_m48_passes(verl_oracle):
    result = verl_oracle.ask_one(
        _megatron("data.train_batch_size=240", "actor_rollout_ref.actor.ppo_mini_batch_size=48")
    )
    _assert_clean(result)
    assert result["startup"]["ok"] is True
    assert result["rollout_config"]["ok"] is True
    _assert_runtime_ok(result)


def test_qwen72b_b240_m40_passes_startup_but_fails_r1(verl_oracle):
    result = verl_oracle.ask_one(
        _megatron("data.train_batch_size=240", "actor_rollout_ref.actor.ppo_mini_batch_size=40")
    )
    _assert_clean(result)
    assert result["startup"]["ok"] is True
    r1 = _check(result, "R1")
    assert r1["ok"] is False and r1["how"] == "restated"
    assert r1["message"] == "Got mini_batch_size=320 and self.engine.get_data_parallel_size()=3"
    # Per-dp mini batch 320/3 is not an integer: the helpers that need it are skipped, not guessed.
    assert _check(result, "R2")["ok"] is None
    assert _check(result, "R3")["ok"] is None


# ---------------------------------------------------------------- batch-math.md §7 item 7 gaps (FSDP)


def test_fsdp_baseline_passes_everything(verl_oracle):
    result = verl_oracle.ask_one(_fsdp("actor_rollout_ref.rollout.n=5"))
    _assert_clean(result)
    assert result["startup"]["ok"] is True
    _assert_runtime_ok(result)


def test_r2_micro_batch_does_not_divide_per_dp_mini(verl_oracle):
    result = verl_oracle.ask_one(
        _fsdp("actor_rollout_ref.rollout.n=5", "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=16")
    )
    assert result["startup"]["ok"] is True
    r2 = _check(result, "R2")
    assert r2["ok"] is False and r2["how"] == "called"
    assert r2["message"] == "data size must be divisible by force_group_size * micro_batch_size_per_gpu"


def test_r5_log_prob_micro_batch_does_not_divide_per_dp_batch(verl_oracle):
    result = verl_oracle.ask_one(
        _fsdp("actor_rollout_ref.rollout.n=8", "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=24")
    )
    assert result["startup"]["ok"] is True
    assert _check(result, "R5")["ok"] is False
    assert _check(result, "R2")["ok"] is True


def test_r3_mini_batch_does_not_divide_batch_legacy_trainer(verl_oracle):
    result = verl_oracle.ask_one(
        _fsdp("actor_rollout_ref.rollout.n=8", "actor_rollout_ref.actor.ppo_mini_batch_size=96", "trainer.use_v1=False")
    )
    assert result["startup"]["ok"] is True
    r3 = _check(result, "R3")
    assert r3["ok"] is False
    assert r3["message"] == "256 % 96 != 0"


def test_r3_v1_trainer_pads_instead(verl_oracle):
    result = verl_oracle.ask_one(
        _fsdp("actor_rollout_ref.rollout.n=8", "actor_rollout_ref.actor.ppo_mini_batch_size=96")
    )
    assert result["context"]["trainer"] == "v1"
    # lcm(dp=8, M*n=768) = 768: 2048 rows are padded to 2304 synthetic-sample-included rows.
    assert result["context"]["padded_rows"] == 2304
    assert _check(result, "R3")["ok"] is True


def test_r4_dynamic_bsz_batch_not_divisible_by_dp_legacy_trainer(verl_oracle):
    result = verl_oracle.ask_one(
        _fsdp(
            "trainer.nnodes=6",
            "trainer.use_v1=False",
            "actor_rollout_ref.rollout.n=5",
            "actor_rollout_ref.actor.use_dynamic_bsz=True",
        )
    )
    assert result["startup"]["ok"] is True  # V1/V2 are skipped with dynamic bsz
    r4 = _check(result, "R4")
    assert r4["ok"] is False
    assert r4["message"] == "1280 % 48 != 0"


def test_r6_token_budget_below_sequence_length(verl_oracle):
    result = verl_oracle.ask_one(
        _fsdp(
            "actor_rollout_ref.actor.use_dynamic_bsz=True",
            "actor_rollout_ref.actor.ppo_max_token_len_per_gpu=2048",
            "actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu=8192",
            "data.max_prompt_length=2048",
            "data.max_response_length=2048",
        )
    )
    assert result["startup"]["ok"] is True
    budgets = [c for c in result["runtime"] if c["check"] == "R6"]
    assert [c["ok"] for c in budgets] == [False, True], budgets  # actor update, actor log-prob
    assert budgets[0]["message"] == (
        "max_token_len must be greater than the sequence length. Got max_token_len=2048 and max_seq_len=4096"
    )


def test_r9_rollout_tp_larger_than_cluster(verl_oracle):
    result = verl_oracle.ask_one(_fsdp("actor_rollout_ref.rollout.tensor_model_parallel_size=16"))
    assert result["startup"]["ok"] is True
    r9 = _check(result, "R9", role="rollout")
    assert r9["ok"] is False and r9["how"] == "restated"
    assert r9["message"] == "rollout world_size: 8 is not divisible by infer_world_size: 16"


def test_ref_policy_checked_when_kl_loss_is_on(verl_oracle):
    result = verl_oracle.ask_one(
        _fsdp("actor_rollout_ref.actor.use_kl_loss=True", "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=24")
    )
    assert result["startup"]["ok"] is True
    assert _check(result, "R5", role="ref")["ok"] is False
    assert _check(result, "R5", role="actor")["ok"] is True


# ---------------------------------------------------------------- compose, critic, rollout config


def test_unknown_override_key_is_a_compose_error(verl_oracle):
    result = verl_oracle.ask_one(_fsdp("actor_rollout_ref.actor.no_such_key=1"))
    assert result["compose_error"].startswith("ConfigCompositionException")
    assert "no_such_key" in result["compose_error"]
    assert result["startup"] is None


def test_critic_mini_batch_larger_than_train_batch(verl_oracle):
    critic = ["algorithm.adv_estimator=gae", "critic.ppo_micro_batch_size_per_gpu=4"]
    good = verl_oracle.ask_one(_fsdp(*critic, "critic.ppo_mini_batch_size=64", fake_model=True))
    bad = verl_oracle.ask_one(_fsdp(*critic, "critic.ppo_mini_batch_size=512", fake_model=True))
    assert good["startup"]["ok"] is True, good["startup"]
    assert _check(good, "R2", role="critic")["ok"] is True
    assert bad["startup"]["ok"] is False
    assert "critic.ppo_mini_batch_size (512)" in bad["startup"]["message"]
    assert FAKEMODEL_DIR.joinpath("config.json").is_file()


def test_rollout_config_expert_parallel_mismatch(verl_oracle):
    result = verl_oracle.ask_one(
        _fsdp(
            "actor_rollout_ref.rollout.expert_parallel_size=4", "actor_rollout_ref.rollout.tensor_model_parallel_size=2"
        )
    )
    assert result["startup"]["ok"] is True  # R12 is not part of validate_config
    assert result["rollout_config"]["ok"] is False
    assert "expert_parallel_size must be equal to" in result["rollout_config"]["message"]


def test_worker_survives_malformed_case(verl_oracle):
    results = verl_oracle.ask([{"id": "broken", "config_name": "no_such_config", "overrides": []}, _fsdp()])
    assert results[0]["compose_error"] is not None
    assert results[1]["startup"]["ok"] is True


# ---------------------------------------------------------------- megatron-core


QWEN72B = {"num_layers": 80, "num_attention_heads": 64, "num_query_groups": 8}


def test_mcore_qwen72b_tp4_pp4(mcore_oracle):
    result = mcore_oracle.ask_one(
        {
            "id": "72b",
            "transformer": {**QWEN72B, "tensor_model_parallel_size": 4, "pipeline_model_parallel_size": 4},
            "microbatches": {"global_batch_size": 512, "micro_batch_size": 1, "data_parallel_size": 3},
        }
    )
    assert result["transformer"]["ok"] is True
    assert result["layers"]["per_stage"] == [[20], [20], [20], [20]]
    assert result["microbatches"]["ok"] is False
    assert result["microbatches"]["message"] == (
        "global batch size (512) is not divisible by micro batch size (1) times data parallel size (3)"
    )


@pytest.mark.parametrize(
    ("extra", "section", "fragment"),
    [
        ({"tensor_model_parallel_size": 12}, "transformer", "must be a multiple of tensor_model_parallel_size (12)"),
        ({"num_attention_heads": 48, "tensor_model_parallel_size": 6}, "transformer", "multiple or divisor"),
        ({"sequence_parallel": True}, "transformer", "Cannot use sequence parallelism without tensor parallelism"),
        ({"expert_model_parallel_size": 4}, "transformer", "num_moe_experts must be non None"),
        (
            {"pipeline_model_parallel_size": 3},
            "layers",
            "num_layers should be divisible by pipeline_model_parallel_size",
        ),
        (
            {"pipeline_model_parallel_size": 4, "virtual_pipeline_model_parallel_size": 3},
            "layers",
            "should be divisible by vp_size 3",
        ),
    ],
)
def test_mcore_rules(mcore_oracle, extra, section, fragment):
    result = mcore_oracle.ask_one({"id": "m", "transformer": {**QWEN72B, **extra}, "microbatches": None})
    assert result[section]["ok"] is False, result
    assert fragment in result[section]["message"]


def test_mcore_kv_heads_divisor_rule_since_0_16(mcore_oracle):
    result = mcore_oracle.ask_one({"id": "kv", "transformer": {**QWEN72B, "tensor_model_parallel_size": 16}})
    assert result["transformer"]["ok"] is True
