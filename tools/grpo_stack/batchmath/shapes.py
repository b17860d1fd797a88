"""Whole-configuration checks: every rule of one framework over one set of plain numbers, plus verified fixes.

`check_verl` / `check_miles` run every formula; `with_alternatives` adds to each violation the nearest values
of its `field` for which the same checker reports that violation gone and nothing new.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from . import megatron, miles, rollout, verl
from .core import ERROR, Violation, alternatives_text, nearest


@dataclass(frozen=True)
class ModelDims:
    layers: int
    heads: int
    kv_heads: int
    experts: int
    max_position_embeddings: int


@dataclass(frozen=True)
class VerlShape:
    version: str  # "0.8.0" | "0.9.1"
    backend: str  # "fsdp" | "megatron"
    model: ModelDims
    nnodes: int
    gpus_per_node: int
    train_batch_size: int
    n: int
    mini: int
    micro: int | None
    log_prob_micro: int | None
    ref_log_prob_micro: int | None
    dynamic: bool = False
    log_prob_dynamic: bool = False
    max_token_len: int | None = None
    log_prob_max_token_len: int | None = None
    max_prompt: int = 1024
    max_response: int = 1024
    tp: int = 1
    pp: int = 1
    cp: int = 1
    ep: int = 1
    etp: int | None = None
    vpp: int | None = None
    sequence_parallel: bool = False
    sp: int = 1
    use_remove_padding: bool = True
    rollout_tp: int = 2
    rollout_dp: int = 1
    rollout_pp: int = 1
    rollout_ep: int = 1
    max_model_len: int | None = None  # None: max_prompt + max_response (the builder's default)
    chunked_prefill: bool = True
    lora_rank: int = 0
    val_do_sample: bool = False
    temperature: float = 1.0
    use_ref: bool = True
    use_v1: bool = True  # trainer.use_v1 (0.9.x only)
    trainer_mode: str = "sync"
    parameter_sync_step: int | None = None
    gen_batch_size: int | None = None
    global_micro: int | None = None  # deprecated actor.ppo_micro_batch_size

    @property
    def world(self) -> int:
        return self.nnodes * self.gpus_per_node

    @property
    def dp(self) -> int | None:
        return verl.engine_dp(self.backend, self.world, tp=self.tp, pp=self.pp, cp=self.cp, sp=self.sp)

    @property
    def v1_trainer(self) -> bool:
        return self.version != "0.8.0" and self.use_v1

    @property
    def max_seq_len(self) -> int:
        return self.max_prompt + self.max_response


def check_verl(s: VerlShape) -> list[Violation]:
    out: list[Violation] = []
    mega = s.backend == "megatron"
    dp = s.dp
    if mega:
        # Startup V1 with static batches; with dynamic ones Megatron's parallel_state fails the same way (M1).
        out += [replace(v, rule_id="M1" if s.dynamic else "V1")
                for v in megatron.world_model_parallel(s.world, s.tp, s.pp, s.cp)]
        out += megatron.expert_world(s.world, s.tp, s.etp, s.ep, s.pp)
        out += megatron.experts(s.model.experts, s.ep)
        out += megatron.attention_heads(s.model.heads, s.model.kv_heads, s.tp)
        out += megatron.layers(s.model.layers, s.pp, s.vpp)
        out += megatron.sequence_parallel(s.sequence_parallel, s.tp)
    if not s.dynamic:
        minimal = (dp * s.micro if dp and s.micro else None) if mega else s.world
        if minimal:
            out += verl.train_batch_startup(s.train_batch_size, s.n, s.world, minimal)
        out += verl.mini_not_above_train(s.train_batch_size, s.mini)
        out += verl.deprecated_global_micro(s.mini, s.global_micro, s.sp, s.world)
    out += verl.micro_settings(s.dynamic, s.log_prob_dynamic, s.micro, s.log_prob_micro, s.ref_log_prob_micro,
                               s.use_ref, s.max_token_len, s.log_prob_max_token_len)
    if not mega:
        out += verl.ulysses_needs_rmpad(s.sp, s.use_remove_padding)
        out += verl.ulysses_heads(s.model.heads, s.model.kv_heads, s.sp, s.world)
    out += verl.validation_temperature(s.val_do_sample, s.temperature)
    out += verl.lora_rank(s.lora_rank, "vllm")
    if dp:
        out += _verl_runtime(s, dp)
    out += verl.rollout_layout(s.world, s.gpus_per_node, s.rollout_tp, s.rollout_dp, s.rollout_pp, s.rollout_ep)
    out += rollout.rollout_heads(s.model.heads, s.model.kv_heads, s.rollout_tp, "vLLM")
    found = verl.context_length(s.max_model_len or s.max_seq_len, s.model.max_position_embeddings, s.max_prompt,
                                s.max_response, s.chunked_prefill)
    # A derived max_model_len is fixed through the response length it came from.
    out += found if s.max_model_len else [replace(v, field="max_response") for v in found]
    if s.v1_trainer:
        out += verl.v1_step(s.train_batch_size, s.trainer_mode, s.parameter_sync_step, s.gen_batch_size)
    return out


def _verl_runtime(s: VerlShape, dp: int) -> list[Violation]:
    out = verl.mini_per_dp(s.mini, s.n, dp)
    out += verl.step_split(s.train_batch_size, s.n, dp, s.mini, s.v1_trainer)
    split = s.cp if s.backend == "megatron" else s.sp
    if s.dynamic:
        if s.max_token_len:
            out += verl.token_budget(s.max_token_len, split, s.max_seq_len, "ppo_max_token_len_per_gpu")
        if s.log_prob_max_token_len and s.log_prob_max_token_len != s.max_token_len:
            out += verl.token_budget(s.log_prob_max_token_len, split, s.max_seq_len, "log_prob_max_token_len_per_gpu")
        return out
    if s.micro:
        out += verl.micro_per_dp(s.mini, s.n, dp, s.micro)
        if s.backend == "megatron":
            out += verl.vpp_micro_groups(s.mini, s.n, dp, s.micro, s.pp, s.vpp)
    rows = verl.padded_rows(s.train_batch_size, s.n, dp, s.mini, s.v1_trainer)
    if s.log_prob_micro:
        out += verl.log_prob_micro(rows, dp, s.log_prob_micro, "actor")
    if s.use_ref and s.ref_log_prob_micro and s.ref_log_prob_micro != s.log_prob_micro:
        out += verl.log_prob_micro(rows, dp, s.ref_log_prob_micro, "ref")
    return out


@dataclass(frozen=True)
class MilesShape:
    model: ModelDims
    nodes: int  # the whole cluster
    gpus_per_node: int
    colocate: bool
    actor_nodes: int  # --actor-num-nodes
    rollout_gpus: int | None  # --rollout-num-gpus; None with colocate (miles uses the actor world)
    rollout_tp: int  # --rollout-num-gpus-per-engine (= SGLang tp)
    rollout_batch: int
    k: int
    global_batch: int
    micro: int = 1
    steps: int | None = None
    tp: int = 1
    pp: int = 1
    cp: int = 1
    ep: int = 1
    etp: int | None = None
    vpp: int | None = None
    sequence_parallel: bool = False
    dynamic: bool = False
    max_token_len: int | None = None
    max_prompt: int = 1024
    max_response: int = 1024
    seq_length: int = miles.PLACEHOLDER_SEQ_LENGTH
    configured_actor_nodes: int | None = None  # values miles.actorNodes, to warn when colocate ignores it

    @property
    def world(self) -> int:
        return self.actor_nodes * self.gpus_per_node

    @property
    def dp(self) -> int | None:
        size = self.tp * self.pp * self.cp
        return self.world // size if self.world and self.world % size == 0 else None


def check_miles(s: MilesShape) -> list[Violation]:
    rollout_gpus = s.world if s.colocate else (s.rollout_gpus or 0)
    out = miles.placement(s.nodes, s.gpus_per_node, s.colocate, s.configured_actor_nodes, rollout_gpus,
                          s.rollout_tp)
    out += rollout.rollout_heads(s.model.heads, s.model.kv_heads, s.rollout_tp, "SGLang")
    if s.world:
        out += [replace(v, rule_id="S4") for v in megatron.world_model_parallel(s.world, s.tp, s.pp, s.cp)]
        out += megatron.expert_world(s.world, s.tp, s.etp, s.ep, s.pp)
    out += megatron.experts(s.model.experts, s.ep)
    out += megatron.attention_heads(s.model.heads, s.model.kv_heads, s.tp)
    out += megatron.layers(s.model.layers, s.pp, s.vpp)
    out += megatron.sequence_parallel(s.sequence_parallel, s.tp)
    out += miles.context_parallel_seq(s.seq_length, s.cp)
    out += miles.steps_per_rollout(s.rollout_batch, s.k, s.steps, s.global_batch)
    out += miles.rollout_samples(s.rollout_batch, s.k, s.global_batch)
    if s.dp:
        out += [replace(v, rule_id="S3") for v in megatron.microbatches(s.global_batch, s.micro, s.dp)]
    out += miles.dynamic_tokens(s.dynamic, s.max_token_len, s.cp, s.max_prompt + s.max_response)
    return out


# Fields a user sets directly, with the search range for alternatives; monotone ones get one (the least) value.
_RANGES = {
    "train_batch_size": lambda s, v: (1, max(4 * v, 64)),
    "mini": lambda s, v: (1, max(v, s.train_batch_size)),
    "micro": lambda s, v: (1, max(v, 64)),
    "log_prob_micro": lambda s, v: (1, max(v, 64)),
    "global_batch": lambda s, v: (1, max(4 * v, 64)),
    "rollout_batch": lambda s, v: (1, max(4 * v, 64)),
    "nnodes": lambda s, v: (1, max(2 * v, 16)),
    "nodes": lambda s, v: (1, max(2 * v, 16)),
    "tp": lambda s, v: (1, 64),
    "pp": lambda s, v: (1, 64),
    "cp": lambda s, v: (1, 64),
    "ep": lambda s, v: (1, 256),
    "vpp": lambda s, v: (2, 16),
    "sp": lambda s, v: (1, 64),
    "rollout_tp": lambda s, v: (1, 64),
    "max_token_len": lambda s, v: (v, max(2 * v, s.max_prompt + s.max_response)),
    "max_model_len": lambda s, v: (1, max(v, s.model.max_position_embeddings)),
    "max_response": lambda s, v: (1, max(v, s.model.max_position_embeddings)),
}
_MONOTONE = {"max_token_len", "max_model_len", "max_response"}


def with_alternatives(shape, violations: list[Violation], check,
                      links: dict[str, tuple[str, ...]] | None = None) -> list[Violation]:
    """Attach verified alternatives (and a fix sentence) to each violation whose field is a plain size.

    `links` names fields that take the same value as a field (one values key feeding several arguments).
    """
    links = links or {}
    before = {(v.rule_id, v.field) for v in violations}
    before_errors = {(v.rule_id, v.field) for v in violations if v.severity == ERROR}
    out = []
    for v in violations:
        current = getattr(shape, v.field, None)
        if v.field not in _RANGES or not isinstance(current, int) or isinstance(current, bool):
            out.append(v)
            continue
        lo, hi = _RANGES[v.field](shape, current)

        def ok(value: int, strict: bool, v=v) -> bool:
            after = check(replace(shape, **{f: value for f in (v.field, *links.get(v.field, ()))}))
            keys = {(a.rule_id, a.field) for a in after}
            if {(a.rule_id, a.field) for a in after if a.severity == ERROR} - before_errors:
                return False  # never trade this problem for a new error
            if strict:  # clears every problem of this field and adds no warning
                return all(a.field != v.field for a in after) and keys <= before
            return (v.rule_id, v.field) not in keys

        count = 1 if v.field in _MONOTONE else 2
        alts = nearest(current, lambda x: ok(x, True), lo=lo, hi=hi, count=count) or nearest(
            current, lambda x: ok(x, False), lo=lo, hi=hi, count=count)
        out.append(replace(v, alternatives=tuple(alts), fix=alternatives_text(v.field, alts) or v.fix))
    return out
