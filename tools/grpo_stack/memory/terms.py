"""The sourced formulas, one function each, plain numbers in and bytes out. Every constant names its source;
[inferred] marks arithmetic no source states (shared reference gpu-memory.md, whose sections are cited as a1-a8).
"""

from __future__ import annotations

from .arch import Arch

GB = 10**9
MIB = 2**20

# --- bytes per parameter ---------------------------------------------------------------------------------------
# Megatron bf16 params with fp32 grads and Adam: 2 + 4 + 12 = 18; the distributed optimizer shards the 12 fp32
# bytes (main params and two moments): 6 + 12/d (Megatron-LM docs/user-guide/features/dist_optimizer.md L14-20;
# theoretical_memory_usage.py L293-303).
MEGATRON_WEIGHT, MEGATRON_GRAD, MEGATRON_OPTIM = 2, 4, 12
# verl FSDP builds the actor in fp32 (engine.py L256, L289; transformer_impl.py L239-245): fp32 param + fp32 grad +
# two fp32 Adam moments = 4 + 4 + 8, all sharded over the FSDP group [inferred, a2].
FSDP_WEIGHT, FSDP_GRAD, FSDP_OPTIM = 4, 4, 8
BF16 = 2
# verl's logits memory: [tokens, vocab] x (4 fp32 + 2 autocast for softmax/logsumexp + 1 softmax output) bytes
# (verl docs/perf/perf_tuning.rst L237-248).
RL_LOGITS_BYTES = 7
# Without the entropy only the first of those terms stays: the fp32 logits, whose log-softmax gradient is written in
# place (verl torch_functional.py logprobs_from_logits, inplace_backward unless the entropy is computed:
# dp_actor.py L173-175 @3f388066) [inferred from the decomposition above].
RL_LOGPROB_BYTES = 4

# --- margins ---------------------------------------------------------------------------------------------------
# CUDA context and allocator cache of a trainer process once its NCCL groups are gone: 3-5 GB measured (slime
# docs/en/blogs/release_v0.1.0.md L92-98); the upper end is carried.
CONTEXT_MARGIN = 5 * GB
# NCCL buffers of a large MoE trainer (expert-parallel groups): "more than 10 GB" (slime blog, a8).
NCCL_MOE_MARGIN = 10 * GB
# Megatron residue after miles/slime offload with the NCCL groups kept: 15-18 GB measured (slime blog L92-98).
MILES_OFFLOAD_RESIDUE = 18 * GB
# Weight-sync buckets: verl checkpoint_engine.update_weights_bucket_megabytes 2048 (rollout.yaml L280-292);
# slime/miles --update-weight-buffer-size 512 MiB (arguments.py L528-532).
VERL_SYNC_BUCKET = 2048 * MIB
MILES_SYNC_BUCKET = 512 * MIB
# The Megatron no-SP activation formula's 5 % buffer for temporaries (theoretical_memory_usage.py L449-451).
MEGATRON_ACT_OVERHEAD = 1.05
PRETRAIN_LOGIT_BYTES = 6  # bf16 logits + their fp32 copy (pretrain_logits)


# Megatron's state precision (radixark/Megatron-LM@0581166, the fork miles' image builds; TransformerEngine's
# FusedAdam@d0067d0). Storage bytes of each --*-dtype (arguments.py L648-653: fp8 is a uint8 Float8Tensor).
DTYPE_BYTES = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1}
# --use-precision-aware-optimizer keeps the master weights as 16-bit remainders of the bf16 parameters
# (OptimizerConfig.store_param_remainders, default True, optimizer_config.py L191; TE FusedAdam L98-102, L213-215,
# TE >= 2.1) or, with --main-params-dtype fp16, as fp16: 2 bytes either way [the fp32 copy TE rebuilds for the
# step, and fp16/bf16 moments unscaled to fp32, exist only inside optimizer.step(), after the activations are freed:
# not counted].
PAO_MASTER = 2
# --grad-reduce-in-bf16 without the precision-aware optimizer: a bf16 gradient buffer, and an fp32 copy of the
# rank's gradient shard made for the step and held until the next zero_grad (distrib_optimizer.py L2451).
BF16_REDUCE_GRAD, BF16_REDUCE_COPY = 2, 4


def megatron_states(dense: float, experts: float, d: int, edp: int, distributed: bool, grad_bytes: float = 4,
                    optim_bytes: float = MEGATRON_OPTIM, grad_copy: float = 0) -> dict[str, float]:
    """Weights, gradients and optimizer of Megatron's most-loaded shard (dense and expert parameters on it).
    `grad_bytes` per parameter in the gradient buffer (every rank holds all of it), `optim_bytes` the master
    weights and both Adam moments (sharded by the distributed optimizer), `grad_copy` an fp32 copy of the rank's
    gradient shard (sharded too)."""
    params = dense + experts

    def sharded(per_param: float) -> float:
        return (dense * per_param / d + experts * per_param / edp) if distributed else params * per_param

    return {"weights": params * MEGATRON_WEIGHT, "gradients": params * grad_bytes + sharded(grad_copy),
            "optimizer": sharded(optim_bytes)}


def megatron_shard(arch: Arch, tp: int, pp: int, ep: int, etp: int) -> tuple[float, float]:
    """(dense, expert) parameters on the most-loaded shard: (block/p + embedding)/t, plus the output layer when
    untied and p == 1 (Megatron-LM theoretical_memory_usage.py L244-266); experts split over ep x etp
    (L213-259)."""
    emb = arch.embedding()
    dense = (arch.block_dense() / pp + emb) / tp
    if not arch.tied and pp == 1:
        dense += emb / tp
    experts = arch.block_experts() / pp / (ep * etp)
    return dense, experts


def lora_params(arch: Arch, rank: int, tp: int, pp: int, shared_experts: bool) -> float:
    """Adapter parameters on one GPU: r x (in + out) per adapted linear [standard; inferred], split like the base.
    Megatron-Bridge shares one adapter over a rank's local experts (peft/lora.py L156 share_expert_adapters);
    Hugging Face PEFT (FSDP) adapts every expert."""
    per_layer = 0.0
    for n_in, n_out, copies, expert in arch.linears():
        per_layer += rank * (n_in + n_out) * (copies / arch.experts if expert and shared_experts else copies)
    return per_layer * arch.layers / pp / tp


def mlp_coefficient(arch: Arch) -> float:
    """Activation bytes per token and hidden unit of the MLP: 4*ffn/h for two matrices (Korthikanti et al. 2022
    Table 2 via theoretical_memory_usage.py L317-319), 6*ffn/h with a gated (SwiGLU) third output [inferred, as
    Megatron-Bridge's SwiGLU-aware ratio, theoretical_memory_utils.py L374-381]; a token goes through its top-k
    routed and shared experts."""
    return (6 if arch.gated else 4) * arch.active_per_token_ffn() / arch.hidden


def layer_activation(arch: Arch, tokens: float, tp: int, sp: bool) -> float:
    """One transformer layer's stored activations for `tokens` tokens (bf16, flash attention: the 5as/h score
    term omitted). SP + selective: sbh(18 + 4ffn/h)/t (L317-319, L378-379); no SP: sbh(10 + 24/t) (L386), whose
    24 = 8 attention + 16 MLP for ffn = 4h."""
    mlp = mlp_coefficient(arch)
    if sp and tp > 1:
        return tokens * arch.hidden * (18 + mlp) / tp
    return tokens * arch.hidden * (10 + (8 + mlp) / tp)


def recomputed_layer(arch: Arch, tokens: float, tp: int, sp: bool) -> float:
    """Full recompute keeps each layer's input, 2*sbh (÷t with SP) [paper's figure via its standard citation;
    inferred, a3]."""
    return 2 * tokens * arch.hidden / (tp if sp and tp > 1 else 1)


def in_flight_layers(layers: int, pp: int, vpp: int | None, microbatches: int | None, stage: str) -> float:
    """Layer-microbatches whose activations a pipeline stage holds at its peak. First stage: all L layers' worth
    (L/p layers x p microbatches) times the interleaved penalty 1 + (p-1)/(p*v), or discounted by min(1, m/p)
    without interleaving (theoretical_memory_usage.py L342-366). Last stage [inferred from the 1F1B schedule]:
    one microbatch of its L/p layers, or with interleaving (v-1)*p + 1 chunks of L/(p*v) layers."""
    if pp <= 1:
        return layers
    if stage == "first":
        if vpp:
            return layers * (1 + (pp - 1) / (pp * vpp))
        return layers * (min(1, microbatches / pp) if microbatches else 1)
    if vpp:
        return layers / (pp * vpp) * ((vpp - 1) * pp + 1)
    return layers / pp


def embedding_activation(tokens: float, hidden: int, pp: int) -> float:
    """Embedding input (8 bytes per token) and its dropout (sbh) for p microbatches in flight (L329-339)."""
    return 8 * tokens * pp + tokens * hidden * pp


def megatron_output_layer(arch: Arch, tokens: float, tp: int, sp: bool) -> float:
    """Megatron's own output-layer term: SP path sbh*4*(1 + V/h)/t (L437-447); no-SP path (s*b*V/t + sbh)*2."""
    if sp and tp > 1:
        return tokens * arch.hidden * 4 * (1 + arch.vocab / arch.hidden) / tp
    return (tokens * arch.vocab / tp + tokens * arch.hidden) * 2


def pretrain_logits(arch: Arch, tokens: float, tp: int, sp: bool) -> float:
    """The output layer in pre-training: Megatron's input term (sbh x 4/t with SP, x 2 without), and the logits at
    the 6 bytes per element its vocab-parallel cross-entropy holds, where Megatron's formula counts 2 (4 with SP):
    the loss copies the bf16 logits to fp32 and takes exp and softmax in place (tensor_parallel/cross_entropy.py
    L25, L61-62, L77 @d98e8a64), so bf16 logits and their fp32 copy are alive together in the forward, and the fp32
    gradient written over the saved softmax (L181, L186-210) and its bf16 cast in the backward."""
    return tokens * arch.hidden * (4 / tp if sp and tp > 1 else 2) + tokens * arch.vocab / tp * PRETRAIN_LOGIT_BYTES


def rl_logits(arch: Arch, tokens: float, tp: int, entropy: bool = True) -> float:
    """Log-probabilities (and the entropy) over a vocabulary split over tp (vocab-parallel): tokens x V/t x 7 bytes
    with the entropy (verl perf_tuning.rst L237-248), 4 without."""
    return tokens * arch.vocab / tp * (RL_LOGITS_BYTES if entropy else RL_LOGPROB_BYTES)


# --- rollout engines -------------------------------------------------------------------------------------------
def kv_bytes_per_token(arch: Arch, tp: int) -> int:
    """KV cache bytes per token on one rank, bf16: 2 (K and V) x L x KV heads per rank x head_dim x 2
    (vLLM kv_cache_interface.py AttentionSpec.real_page_size_bytes @001cabc1; SGLang get_cell_size_per_token
    @001ccef0). KV heads are replicated when tp > KV heads [inferred]. MLA: L x (kv_lora_rank + rope) x 2
    (MLAAttentionSpec)."""
    if arch.mla:
        return arch.layers * (arch.kv_lora_rank + arch.qk_rope_dim) * BF16
    return 2 * arch.layers * max(1, arch.kv_heads // tp) * arch.head_dim * BF16


# verl's rollout `quantization: fp8` hands vLLM blockwise E4M3 weights: 1 byte per Linear parameter plus one fp32
# scale per 128 x 128 block (verl vllm_async_server.py L1030-1040 @v0.9.0, "weight_block_size": [128, 128]); the
# embedding and lm_head stay bf16 (vLLM docs/features/quantization/fp8.md: "all Linear modules (except for the
# final lm_head)").
FP8_LINEAR = 1 + 4 / (128 * 128)


def engine_weights(arch: Arch, tp: int, fp8: bool = False) -> float:
    """Weights of one inference rank: all parameters split over the engine's tensor parallel GPUs, bf16, or FP8
    Linear weights beside bf16 embeddings (norms and biases, a few thousand per layer, counted as Linear)."""
    if not fp8:
        return arch.total() * BF16 / tp
    embeddings = arch.embedding() * (1 if arch.tied else 2)
    return ((arch.total() - embeddings) * FP8_LINEAR + embeddings * BF16) / tp


def vllm_profile_peak(arch: Arch, tp: int, batched_tokens: int, max_num_seqs: int) -> float:
    """Activation peak of vLLM's profile run [inferred from gpu_worker.py determine_available_memory]: one layer's
    forward working set for max_num_batched_tokens tokens, plus fp32 logits of max_num_seqs sampled tokens."""
    return layer_activation(arch, batched_tokens, tp, sp=False) + max_num_seqs * arch.vocab * 4


def sglang_max_running(kv_tokens: float, context_len: int) -> int:
    """SGLang init_memory default max_running_requests = min(max(tokens/context_len*512, 2048), 4096)."""
    return int(min(max(kv_tokens / max(context_len, 1) * 512, 2048), 4096))


# SGLang's memory outside mem_fraction_static (activations and CUDA-graph buffers), by SGLang's own rule for the
# share it leaves (sglang 0.5.16, the base of miles' image, srt/server_args.py): the defaults by the GPU's memory in
# MiB (L3927-3982: chunked_prefill_size, decode max_bs below 4-way tensor parallel / from it), and
# reserved_mem = 512 + max(chunked_prefill_size, 2048) x 1.5 + tp x pp / 8 x 1024 + max_bs x 2 MiB (L4066-4080,
# reserve_for_graph_mb L4164-4173; prefill graphs add 8 MiB per captured size, off under miles' colocation:
# miles arguments.py L2820-2823). "The coefficient 1.5 is a heuristic value" (L3922).
SGLANG_DEFAULTS = ((20 * 1024, 2048, 8, 8), (35 * 1024, 2048, 24, 80), (60 * 1024, 4096, 32, 160),
                   (90 * 1024, 8192, 256, 512), (160 * 1024, 8192, 256, 512), (None, 16384, 512, 512))


def sglang_settings(gpu_bytes: int, tp: int, chunk: int | None = None, max_bs: int | None = None) -> tuple[int, int]:
    """(chunked_prefill_size, decode CUDA-graph max_bs): the ones given, else those SGLang picks for a GPU of this
    size and tensor parallel (0 graphs: off)."""
    mib = gpu_bytes / MIB
    for limit, default_chunk, small, large in SGLANG_DEFAULTS:
        if limit is None or mib < limit:
            return chunk or default_chunk, (small if tp < 4 else large) if max_bs is None else max_bs
    raise AssertionError("unreachable")


def sglang_outside(chunk: int, max_bs: int, tp: int, pp: int) -> tuple[float, float]:
    """(activations + constants, CUDA-graph buffers) in bytes by SGLang's reserve rule; max_bs 0: graphs off."""
    return (512 + max(chunk, 2048) * 1.5 + tp * pp / 8 * 1024) * MIB, max_bs * 2 * MIB


def sglang_auto_fraction(gpu_bytes: int, tp: int, chunk: int, max_bs: int) -> float:
    """mem_fraction_static SGLang sets when the command gives none (server_args.py L4054-4086): the GPU's memory
    less its reserve rule, at least 10 GiB on GPUs above 60 GiB, as a fraction rounded to 3 places (prefill graphs
    not counted: off under miles' colocation)."""
    mib = gpu_bytes / MIB
    act, graphs = sglang_outside(chunk, max_bs, tp, 1)
    reserved = (act + graphs) / MIB
    if mib > 60 * 1024:
        reserved = max(reserved, 10 * 1024)
    return round((mib - reserved) / mib, 3)


# TransformerEngine FP8 training (Megatron --fp8-format, TransformerConfig.fp8; TE v2.18, Megatron-LM core_v0.19.0).
# Weights: beside each bf16 GEMM weight TE keeps its FP8 copy (quantization.py L891-901: "both higher precision and
# quantized copies are present"; performance_considerations.rst L247), cached across micro batches
# (module/linear.py L1883, Megatron passes is_first_microbatch: extensions/transformer_engine.py L1082-1089), and
# on Hopper a physical FP8 transpose for the backward pass (float8_tensor.py L410-420, rst L100-110): 2 B per GEMM
# parameter. --fp8-param-gather (fp8_param) keeps the FP8 weight as the parameter, with no bf16 copy
# (arguments.py L1935-1937): 1 + 1 B, as much as bf16 alone. Blackwell shares one layout (one byte less each way);
# the Hopper figure is carried.
FP8_WEIGHT_CACHE = 2


def fp8_gemm_params(arch: Arch, tp: int, pp: int, ep: int, etp: int) -> float:
    """GEMM weights on the most-loaded shard: the block's dense and expert parameters, not the embedding or the
    output layer (norms and routers, a few thousand per layer, counted in)."""
    return arch.block_dense() / pp / tp + arch.block_experts() / pp / (ep * etp)


def fp8_saved_inputs(arch: Arch, tokens: float, tp: int, sp: bool) -> float:
    """Bytes one layer saves when TE keeps each GEMM's input for the backward in FP8, 1 byte instead of 2
    (module/linear.py L306, L571-577; Megatron MoE README L457: "Stores linear layer inputs in FP8 instead of
    BF16"): half of the QKV and first-MLP inputs (2sbh each, /t with SP) and of the attention-projection and
    second-MLP inputs (2sbh/t and 2sb*ffn/t) [inferred from Korthikanti's terms, layer_activation]."""
    ffn = arch.active_per_token_ffn() / arch.hidden
    if sp and tp > 1:
        return tokens * arch.hidden * (3 + ffn) / tp
    return tokens * arch.hidden * (2 + (1 + ffn) / tp)


def lora_gathered_inputs(arch: Arch, tokens: float, tp: int) -> float:
    """Extra bytes one layer (averaged over dense and MoE layers) stores under Megatron LoRA with sequence
    parallelism: the trainable LoRA-A of a column-parallel linear keeps its all-gathered input until backward
    (Megatron-Bridge skills/nemo-mbridge-perf-memory-tuning/SKILL.md L107-110 @v0.6.0: "Because LoRA-A is trainable,
    the default path retains that full gathered input"), where the frozen base linear keeps nothing
    (TransformerEngine module/linear.py L306) and the bf16 formula counts a 1/t shard: 2sbh(1 - 1/t) for the QKV
    input and, in dense layers, for the first MLP input [inferred]."""
    inputs = 1 + (arch.layers - arch.moe_layers) / arch.layers if arch.layers else 0
    return BF16 * tokens * arch.hidden * inputs * (1 - 1 / tp)
