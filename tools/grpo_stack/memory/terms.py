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


def pretrain_logits(arch: Arch, tokens: float, tp: int, sp: bool) -> float:
    """Megatron's output-layer term: SP path sbh*4*(1 + V/h)/t (L437-447); no-SP path (s*b*V/t + sbh)*2."""
    if sp and tp > 1:
        return tokens * arch.hidden * 4 * (1 + arch.vocab / arch.hidden) / tp
    return (tokens * arch.vocab / tp + tokens * arch.hidden) * 2


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


def engine_weights(arch: Arch, tp: int) -> float:
    """bf16 weights of one inference rank: all parameters split over the engine's tensor parallel GPUs."""
    return arch.total() * BF16 / tp


def vllm_profile_peak(arch: Arch, tp: int, batched_tokens: int, max_num_seqs: int) -> float:
    """Activation peak of vLLM's profile run [inferred from gpu_worker.py determine_available_memory]: one layer's
    forward working set for max_num_batched_tokens tokens, plus fp32 logits of max_num_seqs sampled tokens."""
    return layer_activation(arch, batched_tokens, tp, sp=False) + max_num_seqs * arch.vocab * 4


def sglang_max_running(kv_tokens: float, context_len: int) -> int:
    """SGLang init_memory default max_running_requests = min(max(tokens/context_len*512, 2048), 4096)."""
    return int(min(max(kv_tokens / max(context_len, 1) * 512, 2048), 4096))
