"""One resolved run -> per-GPU memory by phase (rollout, log-prob and reference forward, training step, weight
sync), the colocated peak over phases, KV capacity, host RAM per node, and the nearest fixes that fit.

Phases follow the reference's placement model (gpu-memory.md a5) [inferred model; phases described by verl and
slime sources]: a colocated GPU holds, in each phase, that phase's working set plus what the other phases leave
resident; a disaggregated run has a trainer pool and a rollout pool, each judged on its own GPUs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from . import terms as t
from .arch import Arch

GIB = 2**30
RISKY = 0.90  # reference d5 margin policy: fits <= 90 % of the GPU, risky 90-100 %, OOM above


@dataclass(frozen=True)
class Critic:
    """verl's value model, which PPO with GAE trains beside the actor (verl trainer/ppo/utils.py need_critic:
    `critic.enable`, else `algorithm.adv_estimator == gae`, verl's default). It is the actor's architecture with a
    one-output head for the language-model head (critic.model.path names the actor's model in verl's examples;
    `assumed` where the run does not say so), in the same engine, and on a colocated GPU in the actor's own
    process (verl fuses the roles of a resource pool into one worker, ray_trainer.py create_colocated_worker_cls).
    Its settings are verl's critic keys (critic/critic.yaml, dp_critic.yaml)."""

    param_offload: bool = False
    optimizer_offload: bool = False
    micro_batch: int = 1
    forward_micro: int | None = None  # None: micro_batch
    token_budget: int | None = None  # dynamic batch size: ppo_max_token_len_per_gpu (32768)
    forward_budget: int | None = None
    checkpointing: bool = True  # critic.model.enable_gradient_checkpointing
    remove_padding: bool = False  # critic.model.use_remove_padding (dp_critic.yaml: false)
    ulysses: int = 1
    # The critic's model is taken as the actor's; True where the run does not say so (no critic.model.path, or
    # another model's): GRPO920 then rests its error on the run without the critic and warns with it.
    assumed: bool = False


@dataclass(frozen=True)
class Run:
    """The numbers the model needs, as the builder resolved them (resolve.py) or as a fixture states them."""

    arch: Arch
    framework: str  # verl | miles | megatron (pre-training: no rollout, no reference)
    engine: str  # megatron | fsdp
    gpu_bytes: int
    nodes: int
    gpus_per_node: int
    trainer_nodes: int | None = None  # disaggregated: nodes of the trainer pool; None: colocated on all
    node_ram_bytes: int | None = None
    tp: int = 1
    pp: int = 1
    cp: int = 1
    ep: int = 1
    etp: int | None = None  # None: tp (Megatron's default)
    vpp: int | None = None
    ulysses: int = 1
    sequence_parallel: bool = False
    distributed_optimizer: bool = True
    lora_rank: int = 0
    param_offload: bool = False
    grad_offload: bool = False
    optimizer_offload: bool = False
    # Megatron's CPU Adam (--optimizer-cpu-offload): this fraction of the optimizer state (fp32 main params and
    # moments) lives and steps in host memory for the whole run (--optimizer-offload-fraction: miles' argument
    # default 1.0, Megatron's OptimizerConfig default 0.0 as verl passes it); the fp32 gradient buffer stays.
    cpu_adam_fraction: float = 0.0
    # Megatron's state precision per parameter (terms.py): the gradient buffer (fp32: 4; --main-grads-dtype bf16
    # with the precision-aware optimizer, or --grad-reduce-in-bf16: 2), master weights + Adam moments (12; the
    # precision-aware optimizer: 2 + each moment's --exp-avg(-sq)-dtype), and the fp32 gradient-shard copy of
    # --grad-reduce-in-bf16 (4, else 0). `state_precision` names the flags that set them, for the terms' sources.
    grad_bytes: float = t.MEGATRON_GRAD
    optim_bytes: float = t.MEGATRON_OPTIM
    grad_copy_bytes: float = 0
    state_precision: str = ""
    offload_train: bool = False  # miles --offload-train (always on with --colocate)
    # TransformerEngine FP8 training (--fp8-format, TransformerConfig.fp8) and FP8 parameters (--fp8-param-gather)
    fp8_training: bool = False
    fp8_params: bool = False
    recompute: str = "none"  # none | selective | full
    seq_len: int = 2048  # longest sample: prompt + response, or a multi-turn sample's context bound
    # miles' --rollout-max-context-len (else SGLang's --sglang-context-length) above prompt + response: a multi-turn
    # generate function's sample grows turn by turn up to it (each turn asks at most the room left:
    # generate_endpoint_utils.py compute_request_payload, miles-rl 0.0.2). seq_len is then that bound (the point
    # estimate) and this the favourable end, one turn (prompt + response); None: no sample outgrows one turn.
    one_turn_seq_len: int | None = None
    # Packed micro batches (verl use_remove_padding, true by default in verl's model config): a micro batch holds
    # the tokens of its samples, not micro x longest. mean_seq_len is the expected prompt + response of a sample,
    # a fact of the data and the policy; None takes every sample at its longest (conservative).
    remove_padding: bool = False
    mean_seq_len: int | None = None
    # The favourable end of that assumption where the data's lengths are not both stated: the stated means only,
    # an unstated part at none (docs/memory.md "Severity by confidence"); None: the point estimate assumes nothing.
    # GRPO920 is an error only when this end is over the GPU too.
    favourable_mean_seq_len: int | None = None
    # global.job.lengths.responsePercentile: (percentile, prompt + response tokens at it). A packed micro batch
    # then holds its share of samples above the percentile at their longest and the others at that length.
    percentile_seq_len: tuple[float, int] | None = None
    train_entropy: bool = True  # the training step computes the entropy (verl: entropy_coeff != 0)
    micro_batch: int = 1
    token_budget: int | None = None  # dynamic batch size: tokens per GPU per micro batch
    log_prob_micro: int | None = None  # None: micro_batch
    log_prob_budget: int | None = None
    step_samples: int | None = None  # samples per optimizer step per data-parallel rank (pipeline discount)
    use_ref: bool = False
    ref_offload: bool = False
    rl_logits: bool = True  # False: Megatron pre-training's own output-layer term
    rollout: str | None = None  # vllm | sglang | static (in-process buffer) | None
    rollout_tp: int = 1
    rollout_fp8: bool = False  # verl rollout.quantization fp8: the engine holds FP8 Linear weights (terms.py)
    # vLLM's CUDA graphs: captured unless rollout.enforce_eager (verl rollout.yaml L52: false); the pool's bytes
    # only as a run measured them (no rule sizes it before capture), 0: not counted.
    rollout_graphs: bool = True
    rollout_graph_pool: float = 0.0
    # SGLang's memory outside mem_fraction_static: its prefill chunk and decode CUDA-graph batch (None: SGLang's
    # defaults for the GPU; graph batch 0: graphs off), and whether its activations are taken at SGLang's own
    # reserve rule (the point estimate) or at one layer's forward working set for a chunk (the favourable end).
    sglang_chunk: int | None = None
    sglang_graph_bs: int | None = None
    sglang_reserve_rule: bool = True
    gmu: float = 0.5
    max_model_len: int = 2048
    max_num_seqs: int = 256  # verl rollout.yaml L45-84
    max_batched_tokens: int = 8192  # verl rollout.yaml L45-84
    requests_per_step: int = 0  # prompts x samples generated per step
    static_buffer: int = 0  # rollout == static: bytes of its buffer
    shared_weights: bool = False  # the rollout uses the trainer's own weights (Megatron-RL in-process)
    critic: Critic | None = None  # verl PPO's value model; None: GRPO and the other critic-free estimators

    @property
    def world(self) -> int:
        return self.nodes * self.gpus_per_node

    @property
    def colocated(self) -> bool:
        return self.trainer_nodes is None

    @property
    def trainer_world(self) -> int:
        return (self.trainer_nodes or self.nodes) * self.gpus_per_node

    @property
    def rollout_world(self) -> int:
        return self.world if self.colocated else self.world - self.trainer_world

    @property
    def dp(self) -> int:
        if self.engine == "fsdp":
            return max(1, self.trainer_world // self.ulysses)
        return max(1, self.trainer_world // (self.tp * self.pp * self.cp))

    @property
    def sequence_shards(self) -> int:
        """GPUs one micro batch's tokens are split over: Megatron's context parallel x FSDP's Ulysses."""
        return self.cp * self.ulysses

    @property
    def train_tokens(self) -> int:
        """Tokens of one training micro batch before context or Ulysses parallelism splits them: micro x longest
        sample, or the per-GPU token budget times the GPUs they are split over, as verl's actors (dp_actor.py and
        megatron_actor.py update_policy @e9405d70; engine/utils.py prepare_micro_batches, 0.9.1) and miles
        (training_utils/data.py get_data_iterator, miles-rl 0.0.2) scale it. A sample longer than that still forms
        its own micro batch (slime qwen3-4B.md L140)."""
        if self.token_budget:
            return max(self.token_budget * self.sequence_shards, self.seq_len)
        return self.packed_tokens(self.micro_batch)

    @property
    def microbatches(self) -> int | None:
        """Micro batches per optimizer step per data-parallel rank, which bound the pipeline's first stage's
        microbatches in flight. Static: the step's samples over the micro batch. Under a token budget as many as
        the step's tokens need at the lengths assumed, at most one per sample: verl 0.9.1 cuts
        ceil(tokens / (budget x the GPUs a micro batch is split over)) (engine/utils.py prepare_micro_batches,
        utils/seqlen_balancing.py rearrange_micro_batches), miles first-fits the samples into bins of that size
        (training_utils/data.py get_data_iterator, utils/data.py get_minimum_num_micro_batch_size, miles-rl 0.0.2),
        of which that is the least. Short samples make fewer micro batches than the pipeline is deep."""
        if self.step_samples is None:
            return None
        if not self.token_budget:
            return max(1, self.step_samples // max(1, self.micro_batch))
        tokens = self.packed_tokens(self.step_samples)
        return max(1, min(self.step_samples, math.ceil(tokens / (self.token_budget * self.sequence_shards))))

    @property
    def log_prob_tokens(self) -> int:
        if self.log_prob_budget or (self.token_budget and self.log_prob_micro is None):
            return max((self.log_prob_budget or self.token_budget) * self.sequence_shards, self.seq_len)
        return self.packed_tokens(self.log_prob_micro or self.micro_batch)

    def packed_tokens(self, samples: int) -> int:
        """Tokens of a micro batch of `samples` sequences. Padded: each at the longest. Packed: one at the longest,
        the others at the expected mean [inferred bound: a micro batch of static size may always hold one sample
        that reached the caps]. With a stated response percentile: the samples expected above it (at least one)
        at the longest, the others at the percentile's length, and never below the mean rule."""
        if not self.remove_padding or samples <= 1:
            return samples * self.seq_len
        by_mean = samples * self.seq_len if self.mean_seq_len is None else (
            self.seq_len + (samples - 1) * min(self.mean_seq_len, self.seq_len))
        if self.percentile_seq_len is None:
            return by_mean
        percentile, length = self.percentile_seq_len
        longest = min(samples, max(1, math.ceil(samples * (100 - percentile) / 100 - 1e-9)))
        by_percentile = longest * self.seq_len + (samples - longest) * min(length, self.seq_len)
        return by_percentile if self.mean_seq_len is None else max(by_percentile, by_mean)


@dataclass(frozen=True)
class Term:
    name: str
    bytes: float
    source: str
    margin: bool = False  # outside the torch allocator (context, NCCL): not in a measured allocator peak


@dataclass(frozen=True)
class Phase:
    name: str  # rollout | log-prob | train | weight-sync
    pool: str  # colocated | trainer | rollout
    terms: tuple[Term, ...]
    leaves: tuple[str, ...] = ()  # term names that stay resident into the next phase

    @property
    def total(self) -> float:
        return sum(term.bytes for term in self.terms)

    @property
    def allocated(self) -> float:
        """What torch's allocator would report (max_memory_allocated): the total without the margins."""
        return sum(term.bytes for term in self.terms if not term.margin)


@dataclass(frozen=True)
class Report:
    run: Run
    phases: tuple[Phase, ...]
    states: dict[str, float]  # trainer model states on the most-loaded GPU (weights, gradients, optimizer)
    kv_tokens: float | None = None  # rollout KV capacity per engine, tokens
    kv_need_one: int = 0  # one max_model_len
    kv_need_all: int = 0  # concurrency x (prompt + response)
    engine_refusal: str = ""  # the engine's own start-up refusal, when it has one
    host_bytes: float = 0.0  # host RAM per node the offloaded states need
    notes: tuple[str, ...] = field(default=())

    @property
    def peak(self) -> Phase:
        return max(self.phases, key=lambda p: p.total)

    def fraction(self, phase: Phase) -> float:
        return phase.total / self.run.gpu_bytes

    @property
    def oom(self) -> bool:
        return (any(p.total > self.run.gpu_bytes for p in self.phases) or bool(self.engine_refusal)
                or (self.kv_tokens is not None and self.kv_tokens < self.kv_need_one) or self.host_oom)

    @property
    def host_oom(self) -> bool:
        return bool(self.run.node_ram_bytes) and self.host_bytes > self.run.node_ram_bytes


def estimate(run: Run) -> Report:
    states, shard_params = trainer_states(run)
    host_adam = 0.0
    if run.engine == "megatron" and run.cpu_adam_fraction:
        host_adam = states["optimizer"] * min(1.0, max(0.0, run.cpu_adam_fraction))
        states = {**states, "optimizer": states["optimizer"] - host_adam}
    phases = []
    kv_tokens, refusal, notes = None, "", []
    rollout_terms, engine_resident = _rollout_engine(run, states)
    if run.rollout:
        kv_tokens, refusal = rollout_terms.pop("kv_tokens"), rollout_terms.pop("refusal")
    margins = _margins(run)
    ref = _reference(run)
    critic, critic_phases, critic_host = _critic(run, states, margins, ref)
    if run.rollout:
        residue = _residue(run, states) if run.colocated else []
        pool = "colocated" if run.colocated else "rollout"
        # miles' measured residue already holds the context and the NCCL buffers
        beside = [] if run.offload_train else (margins if run.colocated else margins[:1])
        phases.append(Phase("rollout", pool, (*residue, *(ref if run.colocated and not run.ref_offload else []),
                                              *(critic if run.colocated else []), *beside, *rollout_terms["terms"]),
                            leaves=tuple(x.name for x in residue)))
    trainer_pool = "colocated" if run.colocated else "trainer"
    state_terms = tuple(Term(k, v, _state_source(run, k) + (
        f"; {run.cpu_adam_fraction:.0%} of it in host memory (--optimizer-cpu-offload)"
        if k == "optimizer" and host_adam else "")) for k, v in states.items())
    sleeping = tuple(engine_resident) if run.colocated else ()
    if run.framework != "megatron" or run.rollout:  # pre-training has no log-prob pass
        forward_states = tuple(x for x in state_terms if x.name in _forward_states(run))
        phases.append(Phase("log-prob", trainer_pool, (*forward_states, *_fp8_weights(run), *ref, *critic, *margins,
                                                       *sleeping, *_forward_activation(run)),
                            leaves=tuple(x.name for x in forward_states)))
    phases.append(Phase("train", trainer_pool, (*state_terms, *_fp8_weights(run), *ref, *critic, *margins, *sleeping,
                                                *_train_activation(run)),
                        leaves=tuple(x.name for x in state_terms)))
    phases.extend(Phase(name, trainer_pool, (*terms, *sleeping)) for name, terms in critic_phases)
    if run.rollout and run.rollout != "static":
        phases.append(_weight_sync(run, states, state_terms, margins, [*ref, *critic]))
    kv_one, kv_all = run.max_model_len, _concurrency(run, kv_tokens) * min(run.seq_len, run.max_model_len)
    return Report(run, tuple(phases), states, kv_tokens, kv_one if run.rollout in ("vllm", "sglang") else 0,
                  kv_all if run.rollout in ("vllm", "sglang") else 0, refusal,
                  _host_bytes(run, states, shard_params) + (host_adam + critic_host) * run.gpus_per_node,
                  tuple(notes))


def critic_run(run: Run) -> Run:
    """The critic as a run of its own: the actor's architecture without the language-model head (a tied one keeps
    its embedding once; the one-output value head is negligible), no LoRA, its own offload, batches and padding,
    no vocabulary logits."""
    c = run.critic
    assert c is not None
    return replace(run, arch=replace(run.arch, tied=True), lora_rank=0, param_offload=c.param_offload,
                   grad_offload=c.param_offload, optimizer_offload=c.optimizer_offload, cpu_adam_fraction=0.0,
                   micro_batch=c.micro_batch, log_prob_micro=c.forward_micro, token_budget=c.token_budget,
                   log_prob_budget=c.forward_budget, recompute="full" if c.checkpointing else run.recompute,
                   remove_padding=c.remove_padding, ulysses=c.ulysses, rl_logits=False, critic=None)


def _critic(run: Run, actor_states: dict[str, float], margins: list[Term],
            ref: list[Term]) -> tuple[list[Term], list[tuple[str, tuple[Term, ...]]], float]:
    """The critic's states left on the GPU between its phases, its two phases (values: a forward pass over the
    batch; update: forward and backward), each beside what the actor leaves resident, and its offloaded host
    bytes per GPU. verl's critic loads its offloaded parameters for either pass and its optimizer for the update
    only (fsdp_workers.py CriticWorker compute_values / update_critic)."""
    if run.critic is None:
        return [], [], 0.0
    crun = critic_run(run)
    cstates, _ = trainer_states(crun)
    resident = [Term(x.name.replace("trainer", "critic"), x.bytes, "critic " + x.source)
                for x in _residue(crun, cstates)]
    actor = _residue(run, actor_states)
    loaded = [Term(f"critic {k}", v, "critic: " + _state_source(crun, k)) for k, v in cstates.items()]
    forward = [x for x in loaded if x.name.split()[-1] in _forward_states(crun)]
    values = (*actor, *forward, *ref, *margins,
              Term(f"critic forward activations ({crun.log_prob_tokens} tokens)",
                   _activations(crun, crun.log_prob_tokens, "first", False),
                   "one layer's working set; a value per token, no vocabulary logits [inferred]"), *_gathered(crun))
    update = (*actor, *loaded, *ref, *margins,
              Term(f"critic activations ({crun.train_tokens} tokens)",
                   _activations(crun, crun.train_tokens, "first", True),
                   "recompute full: stored layer inputs (a3)" if crun.recompute == "full" else
                   "Korthikanti et al. Table 2 via theoretical_memory_usage.py L309-386"), *_gathered(crun))
    host = sum(v for k, v in cstates.items() if (k == "optimizer" and crun.optimizer_offload)
               or (k != "optimizer" and crun.param_offload))
    return resident, [("critic-values", values), ("critic-update", update)], host


STATE_SOURCES = {
    "megatron": {"weights": "bf16 weights of the most-loaded shard (theoretical_memory_usage.py L244-266)",
                 "gradients": "fp32 gradient buffer (dist_optimizer.md L14-20)",
                 "optimizer": "fp32 main params + Adam moments, 12 B/param, /d with the distributed optimizer "
                              "(dist_optimizer.md L14-20)"},
    "fsdp": {"weights": "fp32 parameters sharded over the FSDP group (verl engine.py L256, L289)",
             "gradients": "fp32 gradients, sharded (verl transformer_impl.py L374-382)",
             "optimizer": "fp32 Adam moments, 8 B/param, sharded [inferred, a2]"},
}


def _state_source(run: Run, state: str) -> str:
    if run.engine == "megatron" and run.state_precision and state in ("gradients", "optimizer"):
        per_param = (f"{run.grad_bytes:g} B/param" + (f" + a {run.grad_copy_bytes:g} B/param shard copy"
                                                      if run.grad_copy_bytes else "")
                     if state == "gradients" else f"{run.optim_bytes:g} B/param, /d with the distributed optimizer")
        return f"{per_param} ({run.state_precision}; Megatron-LM arguments.py, TransformerEngine FusedAdam)"
    return STATE_SOURCES[run.engine][state]


def trainer_states(run: Run) -> tuple[dict[str, float], float]:
    """Model states on the most-loaded trainer GPU, and the parameters on it."""
    a = run.arch
    if run.engine == "fsdp":
        n = run.trainer_world
        params = a.total() / n
        if run.lora_rank:  # frozen fp32 base, adapters with their own grads and moments
            adapters = t.lora_params(a, run.lora_rank, 1, 1, shared_experts=False) / n
            return {"weights": params * t.FSDP_WEIGHT + adapters * t.FSDP_WEIGHT,
                    "gradients": adapters * t.FSDP_GRAD, "optimizer": adapters * t.FSDP_OPTIM}, params
        return {"weights": params * t.FSDP_WEIGHT, "gradients": params * t.FSDP_GRAD,
                "optimizer": params * t.FSDP_OPTIM}, params
    etp = run.etp or run.tp
    dense, experts = t.megatron_shard(a, run.tp, run.pp, run.ep, etp)
    # Dense and replicated parameters shard over d (Megatron-LM L298-303; Megatron-Bridge adds c: a real
    # difference, the Bridge rule is used: d*c); experts over edp = world / (etp * ep * p) (L244-250).
    d = run.dp * run.cp
    edp = max(1, run.trainer_world // (etp * run.ep * run.pp))
    if run.lora_rank:  # frozen bf16 base; the adapters carry the 18 B/param (or sharded) states
        adapters = t.lora_params(a, run.lora_rank, run.tp, run.pp, shared_experts=True)
        st = t.megatron_states(adapters, 0, d, edp, run.distributed_optimizer, run.grad_bytes, run.optim_bytes,
                               run.grad_copy_bytes)
        st["weights"] += (dense + experts) * t.MEGATRON_WEIGHT
        return st, dense + experts
    return t.megatron_states(dense, experts, d, edp, run.distributed_optimizer, run.grad_bytes, run.optim_bytes,
                             run.grad_copy_bytes), dense + experts


def _forward_states(run: Run) -> tuple[str, ...]:
    """The trainer's states on the GPU during the log-prob pass. verl's FSDP actor frees its gradients after the
    step (dp_actor.py update_policy: zero_grad after the last mini batch, set_to_none) and its compute_log_prob
    loads the offloaded parameters only, not the optimizer (fsdp_workers.py compute_log_prob L684-689 @3f388066;
    update_actor loads both, L604-612). Megatron keeps its gradient buffer and optimizer as the step left them, but
    verl's Megatron worker frees the gradient buffer with the offloaded parameters and its compute_log_prob loads
    the parameters alone (megatron_workers.py compute_log_prob `load_megatron_model_to_gpu(..., load_grad=False)`,
    megatron_utils.py offload_megatron_model_to_cpu @b178a3cd); an offloaded optimizer comes back for
    update_actor only."""
    if run.engine == "fsdp":
        return ("weights",) if run.optimizer_offload else ("weights", "optimizer")
    if run.framework != "verl":
        return ("weights", "gradients", "optimizer")
    return ("weights", *(() if run.param_offload or run.grad_offload else ("gradients",)),
            *(() if run.optimizer_offload else ("optimizer",)))


def _residue(run: Run, states: dict[str, float]) -> list[Term]:
    """What the trainer leaves on a colocated GPU while the engine generates."""
    if run.offload_train:
        return [Term("trainer residue", t.MILES_OFFLOAD_RESIDUE,
                     "Megatron after --offload-train, NCCL kept: 15-18 GB measured (slime release_v0.1.0.md L92-98)")]
    out = []
    for name, off in (("weights", run.param_offload), ("gradients", run.grad_offload or run.param_offload),
                      ("optimizer", run.optimizer_offload)):
        if name not in _forward_states(run):  # FSDP gradients are freed after the step
            continue
        # verl offloads "parameters, optimizer states, and gradients to CPU" between phases (best_practices.rst
        # L228-229); they are reloaded for the step [inferred], so offload lowers only this residue.
        if not off and states[name]:
            out.append(Term(f"trainer {name}", states[name], "resident between phases (no offload)"))
    return out


def _margins(run: Run) -> list[Term]:
    out = [Term("CUDA context + allocator", t.CONTEXT_MARGIN, "3-5 GB measured (slime release_v0.1.0.md L92-98)",
                margin=True)]
    if run.ep > 1:
        out.append(Term("NCCL (expert-parallel groups)", t.NCCL_MOE_MARGIN, "> 10 GB for large MoE (slime blog)",
                        margin=True))
    return out


def _reference(run: Run) -> list[Term]:
    """The reference model on the GPU. verl with LoRA uses the actor's base as the reference (no copy); the FSDP
    reference is fp32 by default (_generated_ppo_trainer.yaml L230); miles swaps reference weights from host
    memory [inferred]."""
    if not run.use_ref or run.lora_rank or run.framework != "verl":
        return []
    a = run.arch
    if run.ref_offload:
        return []
    if run.engine == "fsdp":
        return [Term("reference weights", a.total() / run.trainer_world * t.FSDP_WEIGHT,
                     "fp32 reference, sharded (verl _generated_ppo_trainer.yaml L230)")]
    dense, experts = t.megatron_shard(a, run.tp, run.pp, run.ep, run.etp or run.tp)
    return [Term("reference weights", (dense + experts) * t.BF16, "bf16 reference, same layout as the actor")]


def _activations(run: Run, tokens: float, stage: str, training: bool) -> float:
    a = run.arch
    tokens = tokens / (run.cp * run.ulysses)
    tp = run.tp if run.engine == "megatron" else 1
    sp = run.sequence_parallel and tp > 1
    layer = t.layer_activation(a, tokens, tp, sp)
    if not training:  # forward only: one layer's working set at a time [inferred]
        return layer
    layer -= _layer_saving(run, tokens, tp, sp)
    held = t.in_flight_layers(a.layers, run.pp, run.vpp, run.microbatches, stage)
    if run.recompute == "full":
        body = held * t.recomputed_layer(a, tokens, tp, sp) + layer
    else:
        body = held * layer
    if stage == "first":
        body += t.embedding_activation(tokens, a.hidden, run.pp if run.engine == "megatron" else 1)
    return body


def _layer_saving(run: Run, tokens: float, tp: int, sp: bool) -> float:
    """Bytes one layer's stored activations shrink by in training (negative: grow): FP8 keeps its GEMM inputs in
    one byte; Megatron LoRA under sequence parallelism keeps the gathered inputs its adapters need."""
    if run.engine != "megatron":
        return 0.0
    saved = t.fp8_saved_inputs(run.arch, tokens, tp, sp) if run.fp8_training else 0.0
    return saved - (t.lora_gathered_inputs(run.arch, tokens, tp) if run.lora_rank and sp else 0.0)


def _fp8_weights(run: Run) -> list[Term]:
    """TE's FP8 copy and transpose of each GEMM weight, cached beside the bf16 weights through the trainer's
    passes; none with FP8 parameters (the FP8 weight and its transpose take what the bf16 weight did)."""
    if not run.fp8_training or run.fp8_params or run.engine != "megatron":
        return []
    gemm = t.fp8_gemm_params(run.arch, run.tp, run.pp, run.ep, run.etp or run.tp)
    return [Term("FP8 weight copies", gemm * t.FP8_WEIGHT_CACHE,
                 "FP8 copy + transpose of each GEMM weight, 2 B/param (TransformerEngine, Hopper; "
                 "--fp8-param-gather drops the bf16 weight instead)")]


def _train_activation(run: Run) -> list[Term]:
    """Activations of the training step on the stage with the larger peak (first: L layers' worth in flight;
    last: its own layers plus the logits)."""
    a, tp = run.arch, (run.tp if run.engine == "megatron" else 1)
    tokens = run.train_tokens
    sp = run.sequence_parallel and tp > 1
    per_gpu = tokens / (run.cp * run.ulysses)
    logits = t.rl_logits(a, per_gpu, tp, run.train_entropy) if run.rl_logits else t.pretrain_logits(a, per_gpu, tp,
                                                                                                        sp)
    # Megatron's no-SP formula carries 5 % for temporaries (L449-451); kept only where it is Megatron's formula.
    overhead = t.MEGATRON_ACT_OVERHEAD if (run.engine == "megatron" and not sp and not run.rl_logits) else 1.0
    first = (_activations(run, tokens, "first", True), logits if run.pp == 1 else 0.0)
    last = (_activations(run, tokens, "last", True), logits) if run.pp > 1 else (0.0, 0.0)
    stage, (body, lg) = max((("first", first), ("last", last)), key=lambda kv: sum(kv[1]))
    src = ("recompute full: stored layer inputs (a3)" if run.recompute == "full" else
           "Korthikanti et al. Table 2 via theoretical_memory_usage.py L309-386, per stage and in-flight microbatch")
    lsrc = ("Megatron output layer" if not run.rl_logits else
            "verl logits+entropy 7 B/elem (perf_tuning.rst L237-248)" if run.train_entropy else
            "fp32 logits 4 B/elem, no entropy (entropy_coeff 0: dp_actor.py L445-451; perf_tuning.rst L237-248)")
    if run.recompute == "full":
        # The recomputed layer and the logits are never alive together: backward runs the head first (its saved
        # logits are released once that node has run), then recomputes the last layer [inferred from autograd's
        # order; checkpointed layers hold only their inputs until then].
        working = t.layer_activation(a, per_gpu, tp, sp) - _layer_saving(run, per_gpu, tp, sp)
        return [Term(f"activations ({stage} stage, {tokens} tokens)", (body - working) * overhead, src),
                Term("logits" if lg >= working else "recomputed layer", max(lg, working) * overhead,
                     f"the larger of the logits ({lsrc}) and one recomputed layer, alive one after the other"),
                *_gathered(run)]
    return [Term(f"activations ({stage} stage, {tokens} tokens)", body * overhead, src),
            Term("logits", lg * overhead, lsrc), *_gathered(run)]


def _forward_activation(run: Run) -> list[Term]:
    a, tp = run.arch, (run.tp if run.engine == "megatron" else 1)
    tokens = run.log_prob_tokens
    per_gpu = tokens / (run.cp * run.ulysses)
    return [Term(f"forward activations ({tokens} tokens)", _activations(run, tokens, "first", False),
                 "one layer's working set, no activations kept [inferred]"),
            # the old-log-prob pass always computes the entropy (fsdp_workers.py compute_log_prob L706 @3f388066)
            Term("logits", t.rl_logits(a, per_gpu, tp), "verl logits+entropy 7 B/elem (perf_tuning.rst L237-248)"),
            *_gathered(run)]


def _gathered(run: Run) -> list[Term]:
    """FSDP all-gathers each layer's bf16 parameters for compute, the next one prefetched [inferred, a2]."""
    if run.engine != "fsdp":
        return []
    a = run.arch
    layer = max(a.dense_layer() if (a.dense_layers or not a.experts) else 0,
                a.moe_layer_dense_part() + a.moe_layer_experts() if a.experts else 0)
    return [Term("gathered layers (FSDP)", 2 * layer * t.BF16, "unsharded bf16 parameters of two layers")]


def _rollout_engine(run: Run, states: dict[str, float]) -> tuple[dict, list[Term]]:
    """The engine's own terms, its KV capacity, its start-up refusal, and what it leaves while asleep."""
    if not run.rollout:
        return {}, []
    a = run.arch
    weights = t.engine_weights(a, run.rollout_tp, run.rollout_fp8)
    precision = "FP8 Linear weights (rollout.quantization fp8), bf16 embeddings" if run.rollout_fp8 else "bf16 weights"
    if run.rollout == "static":  # Megatron-RL's in-process inference buffer beside the trainer's own weights
        buffer = Term("inference buffer", run.static_buffer, "the run's configured buffer, allocated once")
        return {"terms": [buffer], "kv_tokens": None, "refusal": ""}, [buffer]
    resident = sum(x.bytes for x in _residue(run, states)) if run.colocated else 0
    resident += sum(x.bytes for x in _reference(run)) if run.colocated and not run.ref_offload else 0
    if not run.offload_train:
        resident += sum(x.bytes for x in _margins(run)) if run.colocated else t.CONTEXT_MARGIN
    free = run.gpu_bytes - resident
    if run.rollout == "vllm":
        # vLLM V1: requested = total x gpu_memory_utilization; start-up fails when free memory is below it
        # ("Free memory on device ... less than desired GPU memory utilization"); KV = requested - weights -
        # profile peak (gpu_worker.py determine_available_memory @35d5cda1).
        budget = run.gpu_bytes * run.gmu
        refusal = "" if free >= budget else (
            f"vLLM refuses to start: {free / GIB:.1f} GiB free on the GPU < gpuMemoryUtilization {run.gmu:g} x "
            f"{run.gpu_bytes / GIB:.1f} GiB = {budget / GIB:.1f} GiB requested")
        profile = t.vllm_profile_peak(a, run.rollout_tp, run.max_batched_tokens, run.max_num_seqs)
        # vLLM 0.24 counts its CUDA-graph pool inside the budget (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS, on by
        # default since 0.21: envs.py L1891-1895, gpu_worker.py L489-492). No rule sizes it before capture; a
        # measured pool (grpo-render --from-log) is carried here, else it is not counted.
        graphs = _vllm_graph_pool(run, "measured")
        kv = budget - weights - profile - sum(x.bytes for x in graphs)
        terms = [Term("rollout weights", weights, f"{precision} / rollout tensor parallel"),
                 Term("rollout activations (profile)", profile, "vLLM profile run [inferred]"),
                 *graphs,
                 Term("KV cache", max(kv, 0), "gpu_memory_utilization x total - weights - profile peak"
                      + (" - CUDA graphs" if graphs else "") + " (vLLM)")]
        # verl sleeps vLLM at level 2 (weights and KV discarded; level 1 for LoRA moves weights to CPU):
        # vllm_async_server.py L1075-1098. The graph pool stays: sleep frees only the weights and KV pools
        # (gpu_worker.py L176, L379, L605; verl perf_tuning.rst L54-58).
        sleeping = _vllm_graph_pool(run, "asleep; vLLM's sleep keeps it (gpu_worker.py L176)")
    else:
        # SGLang: mem_fraction_static of the free memory after init; KV = f x F0 - weights
        # (model_runner_kv_cache_mixin.py profile_max_num_token @001ccef0; verl perf_tuning.rst L35-43).
        frac = run.gmu
        budget = frac * free
        kv = budget - weights
        refusal = "" if kv > 0 else (
            f"SGLang cannot start: mem_fraction_static {frac:g} x {free / GIB:.1f} GiB free = {budget / GIB:.1f} "
            f"GiB does not hold {weights / GIB:.1f} GiB of weights (\"Not enough memory\")")
        terms = [Term("rollout weights", weights, f"{precision} / rollout tensor parallel"),
                 Term("KV cache", max(kv, 0), "mem_fraction_static x free - weights (SGLang)"),
                 *_sglang_outside(run)]
        # miles releases weights and KV with torch_memory_saver; nothing is carried for the sleeping engine.
        sleeping = []
    tokens = max(kv, 0) / t.kv_bytes_per_token(a, run.rollout_tp)
    return {"terms": terms, "kv_tokens": tokens, "refusal": refusal}, sleeping


def _vllm_graph_pool(run: Run, state: str) -> list[Term]:
    """vLLM's CUDA-graph pool as the run's driver log measured it (grpo-render --from-log), where graphs are
    captured; none where nothing measured it."""
    pool = run.rollout_graph_pool if run.rollout_graphs else 0.0
    return [Term("CUDA graphs (vLLM)", pool, f"the run's logged graph pool ({state})")] if pool else []


def _sglang_outside(run: Run) -> list[Term]:
    """What SGLang uses beside its mem_fraction_static share while it generates: activations and CUDA-graph
    buffers. miles captures the graphs under its memory saver and releases them for training
    (SGLANG_MEMORY_SAVER_CUDA_GRAPH, miles ray/rollout/server_group.py L109), so they count in the rollout only."""
    chunk, graph_bs = t.sglang_settings(run.gpu_bytes, run.rollout_tp, run.sglang_chunk, run.sglang_graph_bs)
    rule, graphs = t.sglang_outside(chunk, graph_bs, run.rollout_tp, 1)
    if run.sglang_reserve_rule:
        act = Term("SGLang activations (outside its share)", rule,
                   f"SGLang's reserve rule: 512 MiB + {chunk}-token prefill chunk x 1.5 MiB + tp/8 GiB "
                   "(server_args.py L4066-4080)")
    else:
        act = Term("SGLang activations (outside its share)", t.layer_activation(run.arch, chunk, run.rollout_tp,
                                                                                sp=False),
                   f"one layer's forward working set for a {chunk}-token prefill chunk [inferred]")
    return [act, Term("CUDA graphs (SGLang)", graphs,
                      f"decode batch sizes up to {graph_bs} x 2 MiB (server_args.py reserve_for_graph_mb)")]


def _concurrency(run: Run, kv_tokens: float | None) -> int:
    """Sequences one engine runs at once: its share of a step's requests, capped by max_num_seqs (vLLM) or
    SGLang's default max_running_requests."""
    if not run.rollout or kv_tokens is None:
        return 0
    engines = max(1, run.rollout_world // run.rollout_tp)
    share = -(-run.requests_per_step // engines) if run.requests_per_step else run.max_num_seqs
    cap = run.max_num_seqs if run.rollout == "vllm" else t.sglang_max_running(kv_tokens, run.max_model_len)
    return min(share, cap)


def _weight_sync(run: Run, states, state_terms, margins, ref) -> Phase:
    """Trainer weights stream to the engine in buckets; the engine's weights are awake (verl wakes weights first,
    then KV), the trainer's states are where the step left them."""
    bucket = t.MILES_SYNC_BUCKET if run.framework == "miles" else t.VERL_SYNC_BUCKET
    src = ("--update-weight-buffer-size 512 MiB (slime arguments.py L528-532)" if run.framework == "miles" else
           "update_weights_bucket_megabytes 2048 (verl rollout.yaml L280-292)")
    engine = Term("rollout weights", t.engine_weights(run.arch, run.rollout_tp, run.rollout_fp8),
                  ("FP8 Linear" if run.rollout_fp8 else "bf16") + " weights / rollout tp")
    if not run.colocated:
        return Phase("weight-sync", "trainer", (*state_terms, *ref, *margins, Term("sync bucket", bucket, src)))
    # The step's weights are on the GPU; gradients and optimizer stay only where they are not offloaded (verl
    # offloads the optimizer after the step, the parameters after the sync); miles syncs before --offload-train.
    trainer = tuple(x for x in state_terms if x.name == "weights")
    if not run.offload_train:
        trainer += tuple(x for x in _residue(run, states) if x.name != "trainer weights")
    graphs = _vllm_graph_pool(run, "awake") if run.rollout == "vllm" else []
    return Phase("weight-sync", "colocated", (*trainer, *ref, *margins, engine, *graphs,
                                              Term("sync bucket", bucket, src)))


def _host_bytes(run: Run, states: dict[str, float], shard_params: float) -> float:
    """Host RAM per node that offloaded states need (one copy per GPU of the node), and the reference weights miles
    keeps on the host [inferred]; THUDM/slime#1851 measured ~102 GB per actor under CPU Adam."""
    per_gpu = 0.0
    if run.offload_train:
        per_gpu += sum(states.values())
        if run.use_ref:
            per_gpu += shard_params * t.BF16
    else:
        per_gpu += states["weights"] if run.param_offload else 0
        per_gpu += states["gradients"] if (run.grad_offload or run.param_offload) else 0
        per_gpu += states["optimizer"] if run.optimizer_offload else 0
    if run.rollout == "vllm" and run.colocated and run.lora_rank:  # sleep level 1 moves weights to the host
        per_gpu += t.engine_weights(run.arch, run.rollout_tp, run.rollout_fp8)
    return per_gpu * run.gpus_per_node


# --- fixes -----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Fix:
    field: str  # values knob: tensor | pipeline | micro | logProbMicro | tokenBudget | offload | gmu | nodes | ...
    value: object
    run: Run


def _candidates(run: Run) -> list[Fix]:
    out = []
    a = run.arch
    if run.engine == "megatron":
        for tp in (run.tp * 2, run.tp * 4):
            if tp <= run.gpus_per_node and a.heads % tp == 0 and run.trainer_world % (tp * run.pp * run.cp) == 0:
                out.append(Fix("tensor", tp, replace(run, tp=tp, sequence_parallel=True)))
        for pp in (run.pp * 2, run.pp * 4):
            if a.layers % pp == 0 and run.trainer_world % (run.tp * pp * run.cp) == 0:
                out.append(Fix("pipeline", pp, replace(run, pp=pp)))
    if run.recompute != "full" and run.framework == "verl":
        out.append(Fix("recompute", "full", replace(run, recompute="full")))
    if run.token_budget:
        for b in (run.token_budget // 2, run.token_budget // 4):
            if b >= run.seq_len // max(1, run.cp):
                out.append(Fix("tokenBudget", b, replace(run, token_budget=b)))
    elif run.micro_batch > 1:
        out.append(Fix("micro", max(1, run.micro_batch // 2), replace(run, micro_batch=max(1, run.micro_batch // 2))))
        out.append(Fix("micro", 1, replace(run, micro_batch=1)))
    lp = run.log_prob_micro
    if lp and lp > 1 and not run.log_prob_budget:
        out.append(Fix("logProbMicro", max(1, lp // 2), replace(run, log_prob_micro=max(1, lp // 2))))
    if run.framework == "verl" and not (run.param_offload and run.optimizer_offload):
        out.append(Fix("offload", "params+optimizer", replace(run, param_offload=True, optimizer_offload=True)))
    if run.rollout in ("vllm", "sglang"):
        for g in (0.6, 0.5, 0.4, 0.3):
            if g < run.gmu:
                out.append(Fix("gmu", g, replace(run, gmu=g)))
        for rt in (run.rollout_tp * 2,):
            if rt <= run.gpus_per_node and a.heads % rt == 0:
                out.append(Fix("rolloutTensor", rt, replace(run, rollout_tp=rt)))
    if run.framework == "verl" and not run.lora_rank:
        out.append(Fix("lora", 64, replace(run, lora_rank=64)))
    for n in (run.nodes * 2,):
        out.append(Fix("nodes", n, replace(run, nodes=n, trainer_nodes=None if run.colocated else
                                           (run.trainer_nodes or 0) * 2)))
    return out


def fits(report: Report) -> bool:
    return not report.oom


def nearest_fixes(run: Run, count: int = 3) -> list[tuple[tuple[Fix, ...], Report]]:
    """Single changes the model predicts fit, in the order tried (cheapest first); pairs when none does. A
    fix that moves the problem elsewhere (a new failure) is not offered."""
    found = []
    singles = _candidates(run)
    for fix in singles:
        rep = estimate(fix.run)
        if fits(rep):
            found.append(((fix,), rep))
    if not found:
        for f1 in singles:
            for f2 in _candidates(f1.run):
                if f2.field == f1.field:
                    continue
                rep = estimate(f2.run)
                if fits(rep):
                    found.append(((f1, f2), rep))
                    break
            if len(found) >= count:
                break
    # one suggestion per knob: the first (least change) that fits
    seen, out = set(), []
    for fixes, rep in found:
        key = tuple(f.field for f in fixes)
        if key not in seen:
            seen.add(key)
            out.append((fixes, rep))
    return out[:count]
