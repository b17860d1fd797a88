"""The engines' start-up checks and the host-RAM figure, on runs a user would write."""

from __future__ import annotations

from dataclasses import replace

import pytest
from grpo_stack.memory import Run, estimate

from .rows import H200, preset

QWEN3_8B = Run(preset("qwen3-8b"), "verl", "megatron", H200, 1, 8, tp=2, seq_len=5120, micro_batch=2,
               use_ref=True, rollout="vllm", rollout_tp=2, gmu=0.6, max_model_len=5120, requests_per_step=1024)


def test_vllm_refuses_when_the_resident_trainer_leaves_less_than_it_requests():
    """vLLM asks for gpu_memory_utilization x the whole GPU; with the trainer resident beside it, a large share
    is refused at start-up, and offloading the trainer makes the same share start."""
    greedy = replace(QWEN3_8B, gmu=0.9)
    assert "refuses to start" in estimate(greedy).engine_refusal
    assert not estimate(replace(greedy, param_offload=True, optimizer_offload=True)).engine_refusal


def test_sglang_takes_its_fraction_of_the_free_memory():
    """SGLang's share is mem_fraction_static x the free memory, so it never exceeds the GPU: its failure is weights
    larger than that share."""
    run = Run(preset("qwen3-30b-a3b"), "miles", "megatron", H200, 1, 8, tp=2, ep=2, offload_train=True,
              seq_len=9216, token_budget=8192, rollout="sglang", rollout_tp=1, gmu=0.3, max_model_len=9216)
    report = estimate(run)
    rollout = next(p for p in report.phases if p.name == "rollout")
    assert rollout.total < run.gpu_bytes and "Not enough memory" in report.engine_refusal
    assert not estimate(replace(run, rollout_tp=2)).engine_refusal


def test_host_ram_counts_one_copy_of_the_offloaded_states_per_gpu():
    off = replace(QWEN3_8B, param_offload=True, optimizer_offload=True)
    report = estimate(off)
    assert abs(report.host_bytes - sum(report.states.values()) * 8) < 1
    assert not report.host_oom
    assert estimate(replace(off, node_ram_bytes=int(report.host_bytes) - 1)).host_oom


def test_kv_capacity_grows_with_the_engine_share_and_concurrency_caps_at_max_num_seqs():
    small, large = estimate(replace(QWEN3_8B, gmu=0.4)), estimate(replace(QWEN3_8B, gmu=0.7))
    assert small.kv_tokens < large.kv_tokens
    assert small.kv_need_all == 256 * 5120  # 1024 requests over 4 engines = 256, vLLM's max_num_seqs


def test_megatron_cpu_adam_moves_its_fraction_of_the_optimizer_to_the_host():
    """miles' --optimizer-cpu-offload (fraction 1.0 by its argument default) decides a 30B-A3B run on H100s: the
    optimizer state that put the training step over the GPU lives in host memory; verl passes the same switch
    through Megatron's OptimizerConfig, whose fraction defaults to 0.0, so there it decides nothing until a
    fraction is given."""
    from grpo_stack.memory.resolve import OPT, miles_run, verl_run

    h100 = 81920 * 2**20
    arch = preset("qwen3-30b-a3b")
    argv = {"tensor-model-parallel-size": 2, "expert-model-parallel-size": 8, "expert-tensor-parallel-size": 1,
            "colocate": True, "use-dynamic-batch-size": True, "max-tokens-per-gpu": 8192,
            "rollout-num-gpus-per-engine": 8, "sglang-mem-fraction-static": 0.7, "recompute-granularity": "full",
            "sequence-parallel": True, "rollout-max-response-len": 8192}
    on_gpu = estimate(miles_run(arch, argv, 1, h100, None))
    cpu_adam = estimate(miles_run(arch, {**argv, "optimizer-cpu-offload": True}, 1, h100, None))
    half = estimate(miles_run(arch, {**argv, "optimizer-cpu-offload": True, "optimizer-offload-fraction": 0.5}, 1,
                              h100, None))
    assert on_gpu.oom and not cpu_adam.oom
    assert cpu_adam.states["optimizer"] == 0 < half.states["optimizer"] < on_gpu.states["optimizer"]
    hydra = {"trainer.n_gpus_per_node": 8, "actor_rollout_ref.actor.megatron.tensor_model_parallel_size": 2,
             "actor_rollout_ref.actor.megatron.expert_model_parallel_size": 8, "data.max_prompt_length": 1024,
             "data.max_response_length": 4096}
    switch = {**hydra, OPT + "optimizer_cpu_offload": True}
    assert estimate(verl_run(arch, switch, True, h100, None)).oom
    assert not estimate(verl_run(arch, {**switch, OPT + "optimizer_offload_fraction": 1.0}, True, h100, None)).oom
    off = estimate(verl_run(arch, {**switch, OPT + "optimizer_offload_fraction": 1.0}, True, h100, None))
    assert off.host_bytes > 0


def test_megatrons_state_precision_decides_the_verdict():
    """The precision-aware optimizer (miles --use-precision-aware-optimizer, as its 30B and larger scripts pass it)
    keeps 16-bit remainders for the master weights: that alone fits the 30B-A3B run above on H100s; its moment dtypes
    decide a Qwen3-8B on one H100 (bf16 moments are still over, fp8 ones fit); --grad-reduce-in-bf16 alone costs an
    fp32 copy of the gradient shard on top of a bf16 buffer. Each term's source names the flags."""
    from grpo_stack.memory.resolve import OPT, miles_run, verl_run

    h100 = 81920 * 2**20
    moe = {"tensor-model-parallel-size": 2, "expert-model-parallel-size": 8, "expert-tensor-parallel-size": 1,
           "colocate": True, "use-dynamic-batch-size": True, "max-tokens-per-gpu": 8192,
           "rollout-num-gpus-per-engine": 8, "sglang-mem-fraction-static": 0.7, "recompute-granularity": "full",
           "sequence-parallel": True, "rollout-max-response-len": 8192}
    pao = {"use-precision-aware-optimizer": True}
    arch = preset("qwen3-30b-a3b")
    plain, remainders = (estimate(miles_run(arch, {**moe, **extra}, 1, h100, None)) for extra in ({}, pao))
    assert plain.oom and not remainders.oom
    assert remainders.states["optimizer"] == pytest.approx(plain.states["optimizer"] * 10 / 12)
    dense = {"colocate": True, "actor-num-gpus-per-node": 1, "use-dynamic-batch-size": True,
             "max-tokens-per-gpu": 9216, "rollout-num-gpus-per-engine": 1, "sglang-mem-fraction-static": 0.7,
             "recompute-granularity": "full", "rollout-max-response-len": 8192}
    low = {**pao, "main-grads-dtype": "bf16"}
    bf16, fp8 = (estimate(miles_run(preset("qwen3-8b"), {**dense, **low, "exp-avg-dtype": d, "exp-avg-sq-dtype": d},
                                    1, h100, None)) for d in ("bf16", "fp8"))
    assert bf16.oom and not fp8.oom
    train = next(p for p in fp8.phases if p.name == "train")
    sources = {term.name: term.source for term in train.terms}
    assert "exp-avg-dtype fp8" in sources["optimizer"] and "main-grads-dtype bf16" in sources["gradients"]
    reduced = estimate(miles_run(preset("qwen3-8b"), {**dense, "grad-reduce-in-bf16": True}, 1, h100, None))
    base = estimate(miles_run(preset("qwen3-8b"), dense, 1, h100, None))
    assert reduced.states["gradients"] == pytest.approx(base.states["gradients"] * 6 / 4)  # 2 B + a 4 B copy, d=1
    hydra = {"trainer.n_gpus_per_node": 8, "actor_rollout_ref.actor.megatron.tensor_model_parallel_size": 2,
             "actor_rollout_ref.actor.megatron.expert_model_parallel_size": 8, "data.max_prompt_length": 1024,
             "data.max_response_length": 4096}
    off, on = (estimate(verl_run(arch, {**hydra, **extra}, True, h100, None))
               for extra in ({}, {OPT + "use_precision_aware_optimizer": True}))
    assert on.states["optimizer"] == pytest.approx(off.states["optimizer"] * 10 / 12)


def test_miles_always_shards_the_optimizer():
    """miles sets Megatron's use_distributed_optimizer for every run (set_default_megatron_args): a command
    without --use-distributed-optimizer still has its optimizer state divided over the data-parallel ranks."""
    from grpo_stack.memory.resolve import miles_run

    run = miles_run(preset("qwen3-8b"), {"tensor-model-parallel-size": 2, "colocate": True}, 1, H200, None)
    assert run.distributed_optimizer and run.dp == 4
