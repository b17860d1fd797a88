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
    hydra = {"algorithm.adv_estimator": "grpo",  # GRPO: verl trains no critic
             "trainer.n_gpus_per_node": 8, "actor_rollout_ref.actor.megatron.tensor_model_parallel_size": 2,
             "actor_rollout_ref.actor.megatron.expert_model_parallel_size": 8, "data.max_prompt_length": 1024,
             "data.max_response_length": 4096}
    switch = {**hydra, OPT + "optimizer_cpu_offload": True}
    assert estimate(verl_run(arch, switch, True, h100, None)).oom
    assert not estimate(verl_run(arch, {**switch, OPT + "optimizer_offload_fraction": 1.0}, True, h100, None)).oom
    off = estimate(verl_run(arch, {**switch, OPT + "optimizer_offload_fraction": 1.0}, True, h100, None))
    assert off.host_bytes > 0
    # As a manifest's entrypoint may spell it: a number in a string is read, a shell variable left unexpanded
    # is Megatron's default (0.0), never a crash
    assert not estimate(verl_run(arch, {**switch, OPT + "optimizer_offload_fraction": "1.0"}, True, h100, None)).oom
    for unread in ("${OFFLOAD_FRACTION}", "nan", True):
        assert estimate(verl_run(arch, {**switch, OPT + "optimizer_offload_fraction": unread}, True, h100, None)).oom


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
    hydra = {"algorithm.adv_estimator": "grpo",  # GRPO: verl trains no critic
             "trainer.n_gpus_per_node": 8, "actor_rollout_ref.actor.megatron.tensor_model_parallel_size": 2,
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


def test_fp8_rollout_weights_leave_the_kv_cache_room():
    """verl's `rollout.quantization: fp8` (set through job.verl.overrides) makes vLLM hold 1-byte Linear weights
    beside bf16 embeddings: a Qwen3-8B engine whose bf16 weights fill a 0.2 share of an H100, leaving no KV cache
    (the engine refuses to start), starts with FP8 weights and caches more than five 5,120-token sequences."""
    from grpo_stack.memory.resolve import AR, verl_run

    h100 = 81920 * 2**20
    hydra = {"algorithm.adv_estimator": "grpo",  # GRPO: verl trains no critic
             "trainer.n_gpus_per_node": 8, f"{AR}.rollout.tensor_model_parallel_size": 1,
             f"{AR}.rollout.gpu_memory_utilization": 0.2, "data.max_prompt_length": 1024,
             "data.max_response_length": 4096, f"{AR}.actor.fsdp_config.param_offload": True,
             f"{AR}.actor.fsdp_config.optimizer_offload": True}
    bf16, fp8 = (estimate(verl_run(preset("qwen3-8b"), {**hydra, **extra}, False, h100, None))
                 for extra in ({}, {f"{AR}.rollout.quantization": "fp8"}))
    assert bf16.kv_tokens < bf16.kv_need_one and bf16.oom
    assert fp8.kv_tokens > 5 * fp8.kv_need_one and not fp8.oom
    weights = {p.name: next(t for t in p.terms if t.name == "rollout weights") for p in fp8.phases
               if any(t.name == "rollout weights" for t in p.terms)}
    assert "FP8" in weights["rollout"].source
    arch = preset("qwen3-8b")
    embeddings = arch.embedding() * (1 if arch.tied else 2)
    assert weights["rollout"].bytes == pytest.approx((arch.total() - embeddings) * (1 + 4 / 128**2) + 2 * embeddings)


def test_sglang_needs_room_beside_its_share():
    """SGLang keeps its activations and CUDA-graph buffers outside mem_fraction_static and sizes them by its own
    rule (a 8,192-token prefill chunk x 1.5 MiB, decode graphs x 2 MiB, tp/8 GiB). A colocated Qwen3-30B-A3B on
    H100s whose share leaves less than that beside the trainer's residue (0.8) gets a warning naming the rule; 0.7
    leaves room. Smaller chunks or graphs off shrink the terms; without a stated fraction SGLang's own is taken."""
    from grpo_stack.lint.rules.gpu_memory import findings_for_run
    from grpo_stack.memory.resolve import FIX_KEYS, miles_run
    from grpo_stack.memory.terms import sglang_auto_fraction

    h100 = 81559 * 2**20
    argv = {"tensor-model-parallel-size": 4, "expert-model-parallel-size": 8, "expert-tensor-parallel-size": 1,
            "context-parallel-size": 2, "colocate": True, "use-dynamic-batch-size": True, "max-tokens-per-gpu": 2048,
            "rollout-num-gpus-per-engine": 8, "recompute-granularity": "full", "sequence-parallel": True,
            "rollout-max-response-len": 8192, "optimizer-cpu-offload": True, "use-precision-aware-optimizer": True}
    arch = preset("qwen3-30b-a3b")

    def hits(extra):
        run = miles_run(arch, {**argv, **extra}, 1, h100, None)
        return run, list(findings_for_run(run, "p5.48xlarge", FIX_KEYS["miles-argv"], lambda k: {"key_path": k}))

    run, tight = hits({"sglang-mem-fraction-static": 0.8})
    rollout = next(p for p in estimate(run).phases if p.name == "rollout")
    outside = {t.name: t.bytes for t in rollout.terms}
    assert outside["SGLang activations (outside its share)"] == (512 + 8192 * 1.5 + 8 / 8 * 1024) * 2**20
    assert outside["CUDA graphs (SGLang)"] == 512 * 2 * 2**20  # tp 8: decode batch sizes up to 512
    assert rollout.total > h100
    assert [h.severity.value for h in tight] == ["warning"] and "SGLang's own reserve rule" in tight[0].message
    _, roomy = hits({"sglang-mem-fraction-static": 0.7})
    assert not any("needs" in h.message for h in roomy)
    small, _ = hits({"sglang-mem-fraction-static": 0.8, "sglang-chunked-prefill-size": 2048,
                     "sglang-disable-cuda-graph": True})
    terms = {t.name: t.bytes for p in estimate(small).phases if p.name == "rollout" for t in p.terms}
    assert terms["CUDA graphs (SGLang)"] == 0
    assert terms["SGLang activations (outside its share)"] == (512 + 2048 * 1.5 + 1024) * 2**20
    unstated, _ = hits({})
    assert unstated.gmu == sglang_auto_fraction(h100, 8, 8192, 512) == round((81559 - 14848) / 81559, 3)


def test_a_measured_vllm_graph_pool_sits_in_its_share_and_stays_beside_the_trainer():
    """vLLM 0.24 takes its CUDA-graph pool out of its gpu_memory_utilization share (the KV cache shrinks by it) and
    its sleep keeps the pool, so every trainer phase of a colocated run carries it; enforce_eager captures none."""
    from grpo_stack.memory.terms import kv_bytes_per_token

    pool = 2 * 2**30
    base, logged = estimate(QWEN3_8B), estimate(replace(QWEN3_8B, rollout_graph_pool=pool))
    per_token = kv_bytes_per_token(QWEN3_8B.arch, QWEN3_8B.rollout_tp)
    assert base.kv_tokens - logged.kv_tokens == pytest.approx(pool / per_token)
    totals = {p.name: p.total for p in base.phases}
    for phase in logged.phases:
        assert phase.total == pytest.approx(totals[phase.name] + (0 if phase.name == "rollout" else pool))
    eager = estimate(replace(QWEN3_8B, rollout_graph_pool=pool, rollout_graphs=False))
    assert [p.total for p in eager.phases] == [p.total for p in base.phases] and eager.kv_tokens == base.kv_tokens


def test_fp8_training_trades_weight_copies_for_smaller_saved_inputs():
    """TransformerEngine's FP8 training keeps an FP8 copy and transpose beside each bf16 GEMM weight and saves each
    GEMM's input in FP8. On a Qwen3-8B at tensor parallel 2 with a 14,336-token budget per H100 the training step
    is over in bf16; --fp8-format alone is still over (the copies cost more than the inputs save); with
    --fp8-param-gather the FP8 weight replaces the bf16 one and the step fits. verl's override keys mean the same."""
    from grpo_stack.memory.resolve import MG, miles_run, verl_run

    h100 = 81559 * 2**20
    argv = {"tensor-model-parallel-size": 2, "colocate": True, "use-dynamic-batch-size": True,
            "max-tokens-per-gpu": 14336, "rollout-num-gpus-per-engine": 2, "sglang-mem-fraction-static": 0.5,
            "sequence-parallel": True, "rollout-max-response-len": 8192}
    arch = preset("qwen3-8b")
    bf16, fp8, fp8_params = (estimate(miles_run(arch, {**argv, **extra}, 1, h100, None)) for extra in (
        {}, {"fp8-format": "e4m3"}, {"fp8-format": "e4m3", "fp8-param-gather": True}))
    assert bf16.oom and fp8.oom and not fp8_params.oom

    def train(report):
        return {x.name: x.bytes for p in report.phases if p.name == "train" for x in p.terms}

    act = next(k for k in train(bf16) if k.startswith("activations"))
    assert train(fp8)[act] < train(bf16)[act] and train(fp8_params)[act] == train(fp8)[act]
    assert train(fp8)["FP8 weight copies"] > 0 and "FP8 weight copies" not in train(fp8_params)
    hydra = {"algorithm.adv_estimator": "grpo",  # GRPO: verl trains no critic
             "trainer.n_gpus_per_node": 8, MG + "tensor_model_parallel_size": 2,
             MG + "override_transformer_config.fp8": "hybrid"}
    run = verl_run(arch, hydra, True, h100, None)
    assert run.fp8_training and not run.fp8_params
    assert verl_run(arch, {**hydra, MG + "override_transformer_config.fp8_param": True}, True, h100, None).fp8_params
    assert not verl_run(arch, hydra, False, h100, None).fp8_training  # FSDP: the key is Megatron's


def test_megatron_lora_keeps_gathered_inputs_under_sequence_parallelism():
    """Megatron-Bridge's LoRA-A is trainable, so under sequence parallelism it keeps the all-gathered input of the
    QKV and first MLP projections until backward, where the frozen base keeps nothing and a full fine-tune keeps a
    1/t shard. A verl Megatron LoRA run of Qwen3-8B at TP4 with 40,960-token samples on H100s is over the GPU
    by that term alone; without sequence parallelism (nothing gathered) the term is zero; FSDP's PEFT adds none."""
    from grpo_stack.memory import terms
    from grpo_stack.memory.resolve import AR, MG, verl_run

    h100 = 81559 * 2**20
    arch = preset("qwen3-8b")
    hydra = {"algorithm.adv_estimator": "grpo",  # GRPO: verl trains no critic
             "trainer.n_gpus_per_node": 8, MG + "tensor_model_parallel_size": 4, MG + "sequence_parallel": True,
             "data.max_prompt_length": 1024, "data.max_response_length": 40960 - 1024,
             f"{AR}.actor.ppo_micro_batch_size_per_gpu": 1, f"{AR}.model.lora.rank": 32,
             f"{AR}.rollout.gpu_memory_utilization": 0.5, f"{AR}.rollout.tensor_model_parallel_size": 4}
    report = estimate(verl_run(arch, hydra, True, h100, None))
    train = next(p for p in report.phases if p.name == "train")
    extra = terms.lora_gathered_inputs(arch, 40960, 4) * arch.layers
    assert extra == 2 * 40960 * arch.hidden * 2 * (1 - 1 / 4) * arch.layers  # QKV + first MLP input, dense layers
    assert train.total > h100 > train.total - extra
    def activations(extra_keys, megatron=True):
        r = estimate(verl_run(arch, {**hydra, **extra_keys}, megatron, h100, None))
        return next(x.bytes for p in r.phases if p.name == "train" for x in p.terms if x.name.startswith("activ"))

    full_ft = {f"{AR}.model.lora.rank": 0}
    assert activations({}) == pytest.approx(activations(full_ft) + extra)
    no_sp = {MG + "sequence_parallel": False}
    assert activations(no_sp) == activations({**no_sp, **full_ft})
    assert activations({f"{AR}.model.lora_rank": 32}, megatron=False) == activations(full_ft, megatron=False)


def test_a_micro_batch_holds_no_more_than_the_gpus_share_of_the_batch():
    """verl splits each GPU's share of the step's batch into log-prob micro batches (dp_actor.py
    compute_log_prob: data.split(micro_batch_size)), so a micro batch size above that share is the share: 16
    prompts x 4 samples over 8 GPUs is 8 sequences each, and a log_prob_micro_batch_size_per_gpu of 64 computes
    the log-probabilities of those 8 at once, not of 64 (which would not fit)."""
    from grpo_stack.memory.resolve import AR, verl_run

    h100 = 81920 * 2**20
    hydra = {"algorithm.adv_estimator": "grpo", "trainer.n_gpus_per_node": 8, "data.train_batch_size": 16,
             f"{AR}.rollout.n": 4, f"{AR}.actor.ppo_mini_batch_size": 16, "data.max_prompt_length": 512,
             "data.max_response_length": 1024, f"{AR}.actor.ppo_micro_batch_size_per_gpu": 2}
    share, above = (verl_run(preset("qwen3-8b"), {**hydra, f"{AR}.rollout.log_prob_micro_batch_size_per_gpu": m},
                             False, h100, None) for m in (8, 64))
    assert above.log_prob_tokens == share.log_prob_tokens == 8 * 1536
    assert not estimate(above).oom
    unsplit = replace(above, log_prob_micro=64)  # what the model took before: 64 sequences at once
    assert estimate(unsplit).oom
