"""Batch and parallelism rules (GRPO3xx): verl, miles, Megatron-core and rollout-engine arithmetic.

Each module checks what the job builder emits (`ctx.built`), via grpo_stack.batchmath. Codes are never reused.
"""

from __future__ import annotations

from types import ModuleType

from . import (
    attention_heads,
    context_length,
    expert_parallel,
    log_prob_micro_batch,
    micro_batch_per_dp,
    micro_batch_settings,
    miles_context_parallel,
    miles_global_batch,
    miles_rollout_placement,
    miles_rollout_samples,
    mini_batch_exceeds_train_batch,
    mini_batch_per_dp,
    pipeline_layers,
    rollout_heads,
    rollout_replicas,
    rollout_settings,
    sequence_parallel,
    step_batch_split,
    token_budget,
    train_batch_divisible,
    ulysses,
    vpp_micro_batch_group,
    world_model_parallel,
)

BATCH_MODULES: list[ModuleType] = [
    world_model_parallel,
    train_batch_divisible,
    mini_batch_exceeds_train_batch,
    micro_batch_settings,
    rollout_settings,
    mini_batch_per_dp,
    micro_batch_per_dp,
    step_batch_split,
    log_prob_micro_batch,
    token_budget,
    vpp_micro_batch_group,
    rollout_replicas,
    context_length,
    ulysses,
    attention_heads,
    pipeline_layers,
    expert_parallel,
    sequence_parallel,
    rollout_heads,
    miles_global_batch,
    miles_rollout_samples,
    miles_rollout_placement,
    miles_context_parallel,
]
