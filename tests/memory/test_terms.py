"""The engines' start-up checks and the host-RAM figure, on runs a user would write."""

from __future__ import annotations

from dataclasses import replace

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
