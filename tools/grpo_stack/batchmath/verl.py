"""verl startup (V*) and runtime (R*) batch rules for verl 0.8.0 and 0.9.1 (batch-math.md sections 1-2).

Every function takes plain numbers. `dp` is the training engine's data-parallel size: FSDP N/sp, Megatron
N/(tp*pp*cp). Static-batch rules do not apply with dynamic batch size and vice versa.
"""

from __future__ import annotations

import math

from .core import WARNING, Violation, ceil_to, exact, violation

# vLLM serves LoRA ranks from this list; verl rounds the configured rank up to the next entry.
VLLM_LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)


def engine_dp(backend: str, world: int, *, tp: int = 1, pp: int = 1, cp: int = 1, sp: int = 1) -> int | None:
    """The training engine's data-parallel size, None when the world does not split evenly."""
    return exact(world, tp * pp * cp) if backend == "megatron" else exact(world, sp)


def train_batch_startup(train_batch: int, n: int, world: int, minimal: int) -> list[Violation]:
    """V2: validate_config's (B*n) % minimal_bsz (megatron: dp*m; FSDP: N, ignoring Ulysses)."""
    rows = train_batch * n
    if rows % minimal == 0:
        return []
    return [violation("V2", f"train_batch_size={train_batch} x n={n} = {rows} rows are not divisible by the minimal "
                            f"batch {minimal} (remainder {rows % minimal})", "train_batch_size",
                      related=("n", "micro", "nnodes"))]


def mini_not_above_train(train_batch: int, mini: int) -> list[Violation]:
    """V3: one step must hold at least one mini batch."""
    if train_batch >= mini:
        return []
    return [violation("V3", f"train_batch_size={train_batch} is smaller than ppo_mini_batch_size={mini}", "mini",
                      related=("train_batch_size",))]


def deprecated_global_micro(mini: int, global_micro: int | None, sp: int, world: int) -> list[Violation]:
    """V4: the deprecated actor.ppo_micro_batch_size (global, not per GPU)."""
    if global_micro is None:
        return []
    out = []
    if mini % global_micro:
        out.append(violation("V4", f"ppo_mini_batch_size={mini} is not divisible by ppo_micro_batch_size="
                                   f"{global_micro}", "global_micro"))
    if global_micro * sp < world:
        out.append(violation("V4", f"ppo_micro_batch_size={global_micro} x sp={sp} < {world} GPUs", "global_micro"))
    return out


def micro_settings(dynamic: bool, log_prob_dynamic: bool, micro: int | None, log_prob_micro: int | None,
                   ref_log_prob_micro: int | None, use_ref: bool, max_token_len: int | None,
                   log_prob_max_token_len: int | None) -> list[Violation]:
    """V5a/V5b (startup) and R7 (worker init): which micro-batch settings must be present."""
    out = []
    if dynamic != log_prob_dynamic:
        out.append(violation("R7", f"actor use_dynamic_bsz={dynamic} but log-prob use_dynamic_bsz={log_prob_dynamic}",
                             "dynamic"))
    if dynamic:
        if max_token_len is None:
            out.append(violation("R7", "use_dynamic_bsz needs ppo_max_token_len_per_gpu", "max_token_len"))
        if log_prob_max_token_len is None:
            out.append(violation("R7", "use_dynamic_bsz needs log_prob_max_token_len_per_gpu", "max_token_len"))
        return out
    if micro is None:
        out.append(violation("V5", "static batching needs ppo_micro_batch_size_per_gpu", "micro"))
    if log_prob_micro is None:
        out.append(violation("V5", "static batching needs rollout.log_prob_micro_batch_size_per_gpu",
                             "log_prob_micro"))
    if use_ref and ref_log_prob_micro is None:
        out.append(violation("V5", "static batching needs ref.log_prob_micro_batch_size_per_gpu", "log_prob_micro"))
    return out


def ulysses_needs_rmpad(sp: int, use_remove_padding: bool) -> list[Violation]:
    """V6: Ulysses sequence parallelism runs on unpadded (packed) sequences only."""
    if sp > 1 and not use_remove_padding:
        return [violation("V6", f"ulysses sequence parallel size {sp} needs use_remove_padding=true", "sp")]
    return []


def validation_temperature(do_sample: bool, temperature: float) -> list[Violation]:
    """V8: sampled validation needs a positive temperature."""
    if do_sample and temperature <= 0:
        return [violation("V8", f"validation do_sample=true with temperature={temperature}", "temperature")]
    return []


def lora_rank(rank: int, rollout: str, merge: bool = False) -> list[Violation]:
    """V9: vLLM serves LoRA ranks up to 512, rounded up to its supported list."""
    if rank <= 0 or merge or rollout != "vllm":
        return []
    if rank > VLLM_LORA_RANKS[-1]:
        return [violation("V9", f"LoRA rank {rank} exceeds vLLM's maximum 512", "lora_rank")]
    served = next(r for r in VLLM_LORA_RANKS if r >= rank)
    if served != rank:
        return [violation("V9", f"LoRA rank {rank} is served by vLLM as max_lora_rank={served}", "lora_rank",
                          severity=WARNING)]
    return []


def mini_per_dp(mini: int, n: int, dp: int) -> list[Violation]:
    """R1: each update splits mini*n rows evenly over dp ranks (bare assert at the first update)."""
    rows = mini * n
    if rows % dp == 0:
        return []
    return [violation("R1", f"ppo_mini_batch_size={mini} x n={n} = {rows} rows do not split over dp={dp} "
                            f"(per_dp={rows / dp:.2f})", "mini", related=("n", "nnodes"))]


def micro_per_dp(mini: int, n: int, dp: int, micro: int) -> list[Violation]:
    """R2: the per-rank mini batch is a whole number of micro batches."""
    per_dp = exact(mini * n, dp)
    if per_dp is None or per_dp % micro == 0:
        return []
    return [violation("R2", f"per-dp mini batch {mini}x{n}/{dp} = {per_dp} is not divisible by "
                            f"ppo_micro_batch_size_per_gpu={micro}", "micro", related=("mini",))]


def padded_rows(train_batch: int, n: int, dp: int, mini: int, v1_trainer: bool) -> int:
    """Rows per step: the 0.9 v1 trainer pads with synthetic samples to lcm(dp, mini*n); others do not pad."""
    rows = train_batch * n
    return ceil_to(rows, math.lcm(dp, mini * n)) if v1_trainer else rows


def step_split(train_batch: int, n: int, dp: int, mini: int, v1_trainer: bool) -> list[Violation]:
    """R3/R4 (legacy trainer and 0.8.0: crash) or the v1 trainer's padding (0.9: silent waste)."""
    rows = train_batch * n
    if v1_trainer:
        padded = padded_rows(train_batch, n, dp, mini, True)
        if padded == rows:
            return []
        multiple = math.lcm(dp, mini * n)
        return [violation("R3", f"train_batch_size={train_batch} x n={n} = {rows} rows are padded to {padded} "
                                f"(a multiple of lcm(dp={dp}, mini x n={mini * n}) = {multiple}): {padded - rows} "
                                f"synthetic samples wasted every step", "train_batch_size",
                          related=("mini",), severity=WARNING)]
    out = []
    if rows % dp:
        out.append(violation("R4", f"train_batch_size={train_batch} x n={n} = {rows} rows do not split over "
                                   f"dp={dp} (remainder {rows % dp})", "train_batch_size", related=("n", "nnodes")))
    elif train_batch % mini and (mini * n) % dp == 0:
        out.append(violation("R3", f"per-dp batch {rows // dp} is not a multiple of per-dp mini batch "
                                   f"{mini * n // dp} (train_batch_size={train_batch} % ppo_mini_batch_size={mini} "
                                   f"= {train_batch % mini})", "train_batch_size", related=("mini",)))
    return out


def log_prob_micro(rows: int, dp: int, micro: int, role: str) -> list[Violation]:
    """R5: the per-rank log-prob batch is a whole number of log-prob micro batches."""
    per_dp = exact(rows, dp)
    if per_dp is None or per_dp % micro == 0:
        return []
    return [violation("R5", f"{role} log-prob batch {rows} rows / dp={dp} = {per_dp} is not divisible by "
                            f"log_prob_micro_batch_size_per_gpu={micro}", "log_prob_micro",
                      related=("train_batch_size",))]


def token_budget(max_token_len: int, split: int, max_seq_len: int, what: str) -> list[Violation]:
    """R6: with dynamic batch size one sequence must fit the token budget times the sequence split (sp or cp)."""
    if max_token_len * split >= max_seq_len:
        return []
    return [violation("R6", f"{what}={max_token_len} x split {split} = {max_token_len * split} tokens < longest "
                            f"sequence {max_seq_len} (max_prompt + max_response)", "max_token_len")]


def vpp_micro_groups(mini: int, n: int, dp: int, micro: int, pp: int, vpp: int | None,
                     group: int | None = None) -> list[Violation]:
    """R8 / M10: with VPP the number of micro batches is a multiple of microbatch_group_size_per_vp_stage (= pp)."""
    if not vpp or vpp <= 1:
        return []
    per_dp = exact(mini * n, dp)
    if per_dp is None or per_dp % micro:
        return []
    count, g = per_dp // micro, group or pp
    if count % g == 0:
        return []
    return [violation("R8", f"{count} micro batches per update ({per_dp}/{micro}) are not divisible by the VPP "
                            f"micro-batch group {g} (= pp)", "micro", related=("mini", "pp", "vpp"))]


def rollout_layout(world: int, gpus_per_node: int, tp: int, dp: int = 1, pp: int = 1, ep: int = 1,
                   engine: str = "vllm") -> list[Violation]:
    """R9 replicas tile the world; R10 multi-node replicas fill whole nodes; R11 tp fits a node; R12 EP/PP."""
    out = []
    replica = tp * dp * pp
    if world % replica:
        out.append(violation("R9", f"{world} GPUs are not divisible by the rollout replica size tp*dp*pp = {replica}",
                             "rollout_tp", related=("nnodes",)))
    if replica % min(gpus_per_node, replica):
        out.append(violation("R10", f"a rollout replica of {replica} GPUs does not fill whole {gpus_per_node}-GPU "
                                    "nodes", "rollout_tp"))
    if dp > 1 and gpus_per_node % tp:
        out.append(violation("R11", f"{gpus_per_node} GPUs per node are not divisible by rollout tp {tp}",
                             "rollout_tp"))
    if engine != "trtllm" and ep > 1 and ep != tp * dp:
        out.append(violation("R12", f"rollout expert parallel {ep} != tp*dp = {tp * dp}", "rollout_tp"))
    if pp > 1:
        out.append(violation("R12", f"rollout pipeline parallel {pp} is not implemented for {engine}", "rollout_tp"))
    return out


def context_length(max_model_len: int, max_position_embeddings: int, prompt: int, response: int,
                   chunked_prefill: bool = True, max_batched_tokens: int = 8192) -> list[Violation]:
    """R13 max_model_len within the model's context; shorter than prompt+response truncates; R14 prefill."""
    out = []
    if max_model_len > max_position_embeddings:
        out.append(violation("R13", f"rollout max_model_len={max_model_len} exceeds the model's "
                                    f"max_position_embeddings={max_position_embeddings}", "max_model_len"))
    elif max_model_len < prompt + response:
        out.append(violation("R13", f"rollout max_model_len={max_model_len} < max_prompt + max_response = "
                                    f"{prompt + response}: responses are cut short", "max_model_len",
                             severity=WARNING))
    if not chunked_prefill and max_batched_tokens < max_model_len:
        out.append(violation("R14", f"enable_chunked_prefill=false needs max_num_batched_tokens="
                                    f"{max_batched_tokens} >= max_model_len={max_model_len}", "max_model_len"))
    return out


def ulysses_heads(heads: int, kv_heads: int, sp: int, world: int) -> list[Violation]:
    """R15: Ulysses splits attention heads over sp ranks, and the world into (world/sp, sp)."""
    if sp <= 1:
        return []
    out = []
    if world % sp:
        out.append(violation("R15", f"{world} GPUs are not divisible by ulysses sp={sp}", "sp"))
    if heads % sp:
        out.append(violation("R15", f"{heads} attention heads are not divisible by ulysses sp={sp}", "sp"))
    if kv_heads % sp and sp % kv_heads:
        out.append(violation("R15", f"{kv_heads} KV heads are neither a multiple nor a divisor of ulysses sp={sp}",
                             "sp"))
    return out


def v1_step(train_batch: int, trainer_mode: str, parameter_sync_step: int | None,
            gen_batch_size: int | None) -> list[Violation]:
    """R16: the v1 trainer's separate-async sync step and generation chunks divide the batch."""
    out = []
    if trainer_mode == "separate_async" and parameter_sync_step and train_batch % parameter_sync_step:
        out.append(violation("R16", f"train_batch_size={train_batch} is not divisible by parameter_sync_step="
                                    f"{parameter_sync_step}", "train_batch_size"))
    if gen_batch_size and train_batch % gen_batch_size:
        out.append(violation("R16", f"train_batch_size={train_batch} is not divisible by gen_batch_size="
                                    f"{gen_batch_size}", "train_batch_size"))
    return out

