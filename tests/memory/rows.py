"""The validation rows of the shared reference (gpu-memory/validation_rows.csv), each as the model's inputs with
its source. Architectures are the models.md / config.json facts; nothing here is fitted to a row's outcome."""

from __future__ import annotations

from dataclasses import dataclass

from grpo_stack.catalog.models import MODELS
from grpo_stack.memory import Run
from grpo_stack.memory.arch import Arch, from_shape

GIB = 2**30
H100 = 81920 * 2**20  # EC2 GpuInfo MiB (catalog/instances.py GPU_MEMORY_MIB p5)
H200 = 144384 * 2**20  # p5en
B200 = 183359 * 2**20  # p6-b200

# GPT 7B-class of Megatron's functional tests: L32 h4096 GQA8 GELU ffn16384 LayerNorm, untied; vocab 131073
# padded to a multiple of 128 x TP (Megatron-Bridge gpt_provider.py L266-268): 131584 at TP4, 131200 at TP1.
GPT7B_TP4 = Arch(32, 4096, 32, 8, 128, 16384, 131584, gated=False, norm_params=2)
GPT7B_TP1 = Arch(32, 4096, 32, 8, 128, 16384, 131200, gated=False, norm_params=2)
# Qwen3-8B (models.md row) with its vocab padded for TP4: 152064.
QWEN3_8B_TP4 = Arch(36, 4096, 32, 8, 128, 12288, 152064)
# mbridge's test_small Mixtral-8x2B with 4 layers, read off the module tree printed in its README L74-110:
# linear_qkv 8,388,608 = 2048 x (2048 + 2 x 1024); fc1 22,282,240 = 2048 x 2 x 5440; vocab 65,536,000 / 2048.
MIXTRAL_SMALL = Arch(4, 2048, 16, 8, 128, 0, 32000, experts=8, moe_ffn=5440, topk=2)


def preset(name: str) -> Arch:
    return from_shape(MODELS[name])


# GSM8K prompts as verl's gsm8k preprocessing and the Qwen2.5 chat template make them: prompt_length/mean 104.883
# and 102.398 tokens over the first two steps' batches (verl docs/start/quickstart.rst L116-117 @3f388066, the
# trainer's own metric). Responses have no measured mean for these models and caps: rows take them at their cap,
# so a row's expected sample is the measured prompt mean + max_response_length (conservative in the response).
GSM8K_PROMPT_MEAN = 105


@dataclass(frozen=True)
class Measured:
    id: str
    run: Run
    peak_gib: float  # measured allocator peak
    states_gib: float | None  # measured model states (post-step mem-allocated, or the "Real Model" column)
    source: str


@dataclass(frozen=True)
class Outcome:
    id: str
    run: Run
    oom: bool
    source: str


MEASURED = [
    Measured("A1", Run(GPT7B_TP4, "megatron", "megatron", H100, 1, 8, tp=4, micro_batch=2, seq_len=8192,
                       rl_logits=False, step_samples=4), 53.22, 19.24,
             "Megatron-LM@d98e8a64 gpt3_7b_tp4_pp1_memory_speed golden_values_dev_dgx_h100.json"),
    Measured("A2", Run(GPT7B_TP1, "megatron", "megatron", H100, 1, 8, pp=4, vpp=8, micro_batch=1, seq_len=8192,
                       rl_logits=False, step_samples=4), 56.55, 23.11,
             "Megatron-LM@d98e8a64 gpt3_7b_tp1_pp4_memory_speed golden_values_dev_dgx_h100.json"),
    Measured("A3", Run(QWEN3_8B_TP4, "megatron", "megatron", H100, 1, 8, tp=4, micro_batch=1, seq_len=1024,
                       distributed_optimizer=False, rollout="static", static_buffer=20 * 10**9, step_samples=2),
             59.75, None, "Megatron-LM@d98e8a64 gpt_grpo_tp4_pp1_dp2_8b_throughput (20 GB inference buffer)"),
    *[Measured(f"A{4 + i}", Run(MIXTRAL_SMALL, "megatron", "megatron", H100, 1, 8, tp=tp, micro_batch=mbs,
                                seq_len=4096, rl_logits=False), peak, model, "ISEEKYAN/mbridge@10cb17f5 "
                                "memory_estimator/README.md L60-65 (GB = GiB: 1.25 B x 7.5 B = 8.74)")
      for i, (tp, mbs, peak, model) in enumerate(((2, 1, 6.6, 5.3), (2, 2, 8.0, 5.3), (1, 1, 11.2, 8.8),
                                                   (1, 2, 13.8, 8.8)))],
]

OUTCOMES = [
    # ETP 1 for Qwen3-30B-A3B: the seed arithmetic of the rows (gpu-memory/seed_rows_calc.py) splits experts over EP.
    # Disaggregated: the 8-GPU trainer pool at TP4 PP2 DP1 holds 18 B/param with nothing to shard the optimizer.
    Outcome("B1", Run(preset("qwen2.5-72b"), "miles", "megatron", H200, 2, 8, trainer_nodes=1, tp=4, pp=2,
                      sequence_parallel=True, recompute="full", seq_len=8192, token_budget=8192, use_ref=True,
                      rollout="sglang", rollout_tp=8, gmu=0.8, max_model_len=8192), True,
            "awslabs/awsome-distributed-ai@ec59e119 miles/docs/VERIFICATION_LOG.md"),
    Outcome("B2", Run(preset("qwen3-30b-a3b"), "miles", "megatron", H200, 1, 8, tp=2, ep=2, etp=1,
                      sequence_parallel=True, distributed_optimizer=True, offload_train=True, recompute="full",
                      seq_len=9216, token_budget=8192, use_ref=True, rollout="sglang", rollout_tp=2, gmu=0.75,
                      max_model_len=9216), True,
            "awslabs/awsome-distributed-ai@b103529d miles/recipe/run_grpo_qwen3_30b_a3b.sh header"),
    Outcome("B3", Run(preset("qwen3-30b-a3b"), "miles", "megatron", H200, 2, 8, tp=2, ep=2, etp=1,
                      sequence_parallel=True, distributed_optimizer=True, offload_train=True, recompute="full",
                      seq_len=9216, token_budget=8192, use_ref=True, rollout="sglang", rollout_tp=2, gmu=0.75,
                      max_model_len=9216), False,
            "awslabs/awsome-distributed-ai@b103529d run_grpo_qwen3_30b_a3b.sh + VERIFICATION_LOG.md"),
    Outcome("B4", Run(preset("qwen3-4b"), "miles", "megatron", H200, 1, 8, offload_train=True, recompute="full",
                      seq_len=9216, token_budget=8192, use_ref=True, rollout="sglang", rollout_tp=1, gmu=0.7,
                      max_model_len=9216), False,
            "awslabs/awsome-distributed-ai@ec59e119 miles/docs/VERIFICATION_LOG.md"),
    Outcome("B5", Run(preset("qwen3-235b-a22b"), "verl", "megatron", B200, 6, 8, tp=4, pp=3, ep=4, etp=1,
                      sequence_parallel=True, lora_rank=128, recompute="full", seq_len=2048 + 24576, micro_batch=2,
                      use_ref=True, rollout="vllm", rollout_tp=8, gmu=0.7, max_model_len=2048 + 24576,
                      max_num_seqs=64), False,
            "awslabs/awsome-distributed-ai@964822fb verl grpo-megatron-lora conf/model/qwen3-235b.yaml"),
    Outcome("B6", Run(preset("qwen3-235b-a22b"), "verl", "megatron", B200, 6, 8, tp=4, pp=1, ep=4, etp=1,
                      sequence_parallel=True, lora_rank=128, recompute="full", seq_len=2048 + 24576, micro_batch=2,
                      use_ref=True, rollout="vllm", rollout_tp=4, gmu=0.85, max_model_len=2048 + 24576,
                      max_num_seqs=64), True,
            "same file, comment 'Previous config ... OOM'd at vLLM init' (gmu 0.85: seed_rows_calc.py)"),
    # Qwen2-7B-Instruct (the qwen2.5-7b shape: L28 h3584 ffn18944 GQA4 vocab 152064) full fine-tune on 2 x H800,
    # every fact from the script: micro 16 per GPU for the actor and the log-prob pass, 1024 + 1024 tokens, remove
    # padding, gradient checkpointing, actor param + optimizer offload, reference param offload, entropy_coeff 0,
    # vLLM TP2 gmu 0.6; GSM8K lengths as GSM8K_MEAN states.
    Outcome("B13", Run(preset("qwen2.5-7b"), "verl", "fsdp", 81559 * 2**20, 1, 2, param_offload=True,
                       optimizer_offload=True, recompute="full", seq_len=2048, remove_padding=True,
                       mean_seq_len=GSM8K_PROMPT_MEAN + 1024, train_entropy=False, micro_batch=16,
                       log_prob_micro=16, use_ref=True, ref_offload=True, rollout="vllm", rollout_tp=2, gmu=0.6,
                       max_model_len=2048, requests_per_step=1024 * 5), False,
            "volcengine/verl@3f388066 examples/tuning/7b/qwen2-7b_grpo_2_h800_fsdp_vllm.sh (unchanged since "
            "c62e7ac7, the file device_tuning.rst L127-134 links); H800 81559 MiB"),
]


@dataclass(frozen=True)
class Boundary:
    id: str
    run: Run  # micro_batch is set per candidate: samples per Ulysses group = per-GPU count x ulysses
    largest_fit: int  # per-GPU samples (the scripts' nproc_per_gpu)
    smallest_oom: int
    source: str


def _lora_fsdp(name: str, gpus: int, gmu: float) -> Run:
    """verl's examples/tuning LoRA scripts: r32 all-linear, FSDP over all GPUs, param + optimizer offload, reference
    offloaded, gradient checkpointing, Ulysses 2, remove padding, prompt 512 + response 1024, n 5, entropy_coeff
    0.001 (the step computes the entropy), vLLM TP = GPUs, max_num_seqs 512, max_model_len and
    max_num_batched_tokens 1536; GSM8K lengths as GSM8K_PROMPT_MEAN states."""
    return Run(from_config_name(name), "verl", "fsdp", H100, 1, gpus, ulysses=2, lora_rank=32, param_offload=True,
               optimizer_offload=True, recompute="full", seq_len=1536, remove_padding=True,
               mean_seq_len=GSM8K_PROMPT_MEAN + 1024, use_ref=True, ref_offload=True,
               rollout="vllm", rollout_tp=gpus, gmu=gmu, max_model_len=1536, max_num_seqs=512,
               max_batched_tokens=1536)


def from_config_name(name: str) -> Arch:
    import json
    from pathlib import Path

    from grpo_stack.memory.arch import from_config

    return from_config(json.loads((Path(__file__).parent / "configs.json").read_text())[name]["config"])


BOUNDARIES = [
    Boundary("B7", _lora_fsdp("Qwen2.5-72B", 8, 0.4), 22, 23,
             "volcengine/verl@3f388066 examples/tuning/70b/qwen2-72b_grpo-lora_8_h100_fsdp_vllm.sh L10 "
             "(16 fit, 32 OOM, 24 OOM, 20 fit, 22 fit, 23 OOM)"),
    Boundary("B8", _lora_fsdp("Qwen2.5-32B", 4, 0.3), 44, 45,
             "volcengine/verl@3f388066 examples/tuning/32b/qwen2-32b_grpo-lora_4_h100_fsdp_vllm.sh L10 "
             "(... 44 fit, 46 OOM, 45 OOM)"),
    Boundary("B9", _lora_fsdp("Qwen2.5-14B", 2, 0.25), 58, 59,
             "volcengine/verl@3f388066 examples/tuning/14b/qwen2-14b_grpo-lora_2_h100_fsdp_vllm.sh L10 "
             "(... 58 fit, 59 OOM)"),
]
