"""A built job (the arguments the run will really get) + its spec -> the memory model's Run.

Numbers come from the emitted arguments first and the framework's own defaults for keys the builder leaves out
(verl 0.9 config defaults; Megatron/miles argument defaults), the model's architecture from the spec's catalogue
entry or `model.shape`, the GPU and node memory from the instance catalogue. None when a fact is missing (an
uncatalogued instance type): the model is not guessed.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..catalog.capacity import stated_in_values
from ..catalog.instances import InstanceType, gpu_memory_mib, lookup
from . import terms as t
from .arch import float_arg, from_shape, int_arg
from .model import Critic, Run

AR = "actor_rollout_ref"
MG = f"{AR}.actor.megatron."
FS = f"{AR}.actor.fsdp_config."
OPT = f"{AR}.actor.optim.override_optimizer_config."
MIB = 2**20

# Run field -> the values key a fix of that knob changes, per framework.
FIX_KEYS = {
    "verl": {"tensor": "global.job.parallel.tensor", "pipeline": "global.job.parallel.pipeline",
             "micro": "global.job.verl.batch.ppoMicroBatchSizePerGpu",
             "logProbMicro": "global.job.verl.batch.logProbMicroBatchSizePerGpu",
             "tokenBudget": "global.job.verl.batch.ppoMaxTokenLenPerGpu", "offload": "global.job.offload",
             "gmu": "global.job.rollout.gpuMemoryUtilization", "rolloutTensor": "global.job.rollout.tensorParallel",
             "lora": "global.job.lora.rank", "nodes": "global.cluster.nodes",
             "recompute": "global.job.verl.overrides." + MG + "override_transformer_config.recompute_granularity"},
    # a RayJob entrypoint's Hydra keys (memory/manifest.py)
    **{f"verl-hydra-{engine}": {
        "tensor": MG + "tensor_model_parallel_size", "pipeline": MG + "pipeline_model_parallel_size",
        "micro": f"{AR}.actor.ppo_micro_batch_size_per_gpu",
        "logProbMicro": f"{AR}.rollout.log_prob_micro_batch_size_per_gpu",
        "tokenBudget": f"{AR}.actor.ppo_max_token_len_per_gpu",
        "offload": f"{AR}.actor.{'megatron' if engine == 'megatron' else 'fsdp_config'}"
                   ".param_offload+optimizer_offload",
        "gmu": f"{AR}.rollout.gpu_memory_utilization",
        "rolloutTensor": f"{AR}.rollout.tensor_model_parallel_size",
        "lora": f"{AR}.model.{'lora.rank' if engine == 'megatron' else 'lora_rank'}", "nodes": "trainer.nnodes",
        "recompute": (MG + "override_transformer_config.recompute_granularity" if engine == "megatron" else
                      f"{AR}.model.enable_gradient_checkpointing"),
    } for engine in ("megatron", "fsdp")},
    # a RayJob entrypoint's miles arguments (memory/manifest.py)
    "miles-argv": {"tensor": "--tensor-model-parallel-size", "pipeline": "--pipeline-model-parallel-size",
                   "micro": "--micro-batch-size", "tokenBudget": "--max-tokens-per-gpu",
                   "gmu": "--sglang-mem-fraction-static", "rolloutTensor": "--rollout-num-gpus-per-engine"},
    # (no "nodes": the model's node count is the whole run's, which disaggregated miles splits over two arguments)
    "miles": {"tensor": "global.job.parallel.tensor", "pipeline": "global.job.parallel.pipeline",
              "micro": "global.job.miles.microBatchSize", "tokenBudget": "global.job.miles.maxTokensPerGpu",
              "gmu": "global.job.rollout.gpuMemoryUtilization", "rolloutTensor": "global.job.rollout.tensorParallel",
              "nodes": "global.cluster.nodes"},
}
# verl under backend fsdp: no Megatron parallel sizes (the values refuse parallel.tensor/pipeline there), and
# recompute is FSDP's gradient checkpointing, a verl key the overrides take.
FIX_KEYS["verl-fsdp"] = {**{k: v for k, v in FIX_KEYS["verl"].items() if k not in ("tensor", "pipeline")},
                         "recompute": f"global.job.verl.overrides.{AR}.model.enable_gradient_checkpointing"}


def fix_keys(framework: str, engine: str) -> dict[str, str]:
    """The values keys a GRPO920 fix may name for a run of `framework` on `engine` (its training backend)."""
    return FIX_KEYS["verl-fsdp" if framework == "verl" and engine == "fsdp" else framework]


def _hardware(spec, stated: InstanceType | None) -> tuple[int, int | None] | None:
    instance = spec.cluster.get("gpuInstanceType")
    if not isinstance(instance, str):
        return None
    stated = stated or stated_in_values(spec.data, instance)
    mib = gpu_memory_mib(instance, stated)
    if not mib:
        return None
    node = lookup(instance) or stated
    return mib * MIB, (node.allocatable_memory_mib * MIB if node else None)


def run_for(spec, built, stated: InstanceType | None = None) -> Run | None:
    """The Run of a built verl or miles job, or None when the GPU's memory is not known (a type neither the
    catalogue nor `stated` / the values' global.instanceTypes give it for) or the model has no vocab."""
    hw = _hardware(spec, stated)
    if hw is None or built is None:
        return None
    arch = from_shape(spec.model)
    if not arch.vocab:
        return None
    values = {a.key: a.value for a in built.args}
    if built.framework == "verl":
        run = verl_run(arch, values, built.entrypoint[-1].endswith("ppo_megatron_trainer"), *hw)
    else:
        run = miles_run(arch, {**values, **argv_options(built.extra or ())}, int(spec.cluster["nodes"]), *hw)
    return with_lengths(run, spec.job.get("lengths") or {})


def with_lengths(run: Run, lengths: dict) -> Run:
    """The run with what global.job.lengths states of its data (maxPrompt, maxResponse, meanPrompt, meanResponse,
    responsePercentile): the point estimate at the stated means, the favourable end at what is stated only."""
    favourable = favourable_length(lengths) if "maxPrompt" in lengths else run.favourable_mean_seq_len
    return replace(run, mean_seq_len=mean_length(lengths), favourable_mean_seq_len=favourable,
                   percentile_seq_len=percentile_length(lengths))


def argv_options(words) -> dict[str, Any]:
    """`--key value` and bare `--flag` words of a miles command line -> {key: value or True}; a key's first value
    is kept (--eval-prompt-data NAME PATH)."""
    out: dict[str, Any] = {}
    words = list(words)
    for i, word in enumerate(words):
        if word.startswith("--") and len(word) > 2:
            key, eq, inline = word[2:].partition("=")
            nxt = words[i + 1] if i + 1 < len(words) else None
            out[key] = inline if eq else (True if nxt is None or nxt.startswith("--") else _number(nxt))
    return out


def _number(text: str) -> Any:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def mean_length(lengths: dict) -> int | None:
    """global.job.lengths.meanPrompt + meanResponse, each at most its maximum and its maximum where absent; None
    when neither is given (the model then takes every sample at its longest)."""
    if lengths.get("meanPrompt") is None and lengths.get("meanResponse") is None:
        return None
    return sum(min(int(lengths.get(f"mean{part}") or lengths[f"max{part}"]), int(lengths[f"max{part}"]))
               for part in ("Prompt", "Response"))


def percentile_length(lengths: dict) -> tuple[float, int] | None:
    """global.job.lengths.responsePercentile -> (percentile, a sample's length with its response there): the
    prompt at meanPrompt, else maxPrompt, the response at most maxResponse. None when not stated."""
    stated = lengths.get("responsePercentile")
    if not stated:
        return None
    prompt = min(int(lengths.get("meanPrompt") or lengths["maxPrompt"]), int(lengths["maxPrompt"]))
    return float(stated["percentile"]), prompt + min(int(stated["tokens"]), int(lengths["maxResponse"]))


def favourable_length(lengths: dict) -> int | None:
    """The mean sample length at the favourable end of the length assumption: each part at its stated mean (a
    measured prompt mean is the floor), an unstated part at none at all: nothing rules out short prompts or a policy
    that stops at once. None when both means are stated: nothing is assumed."""
    if lengths.get("meanPrompt") is not None and lengths.get("meanResponse") is not None:
        return None
    return sum(min(int(lengths[f"mean{part}"]), int(lengths[f"max{part}"])) for part in ("Prompt", "Response")
               if lengths.get(f"mean{part}") is not None)


def megatron_precision(v: dict) -> dict[str, Any]:
    """The Run fields of Megatron's state precision from its arguments ({"main-grads-dtype": "bf16", ...}). Without
    the precision-aware optimizer Megatron refuses any other dtype (OptimizerConfig.__post_init__), so only
    --grad-reduce-in-bf16 changes anything there."""
    if v.get("use-precision-aware-optimizer"):
        dtypes = {name: str(v.get(name) or "fp32") for name in ("main-grads-dtype", "exp-avg-dtype",
                                                                     "exp-avg-sq-dtype")}
        moments = sum(t.DTYPE_BYTES.get(dtypes[m], 4) for m in ("exp-avg-dtype", "exp-avg-sq-dtype"))
        named = ", ".join(f"{k} {d}" for k, d in dtypes.items() if d != "fp32")
        return {"grad_bytes": t.DTYPE_BYTES.get(dtypes["main-grads-dtype"], 4), "optim_bytes": t.PAO_MASTER + moments,
                "state_precision": "precision-aware optimizer" + (f": {named}" if named else "")}
    if v.get("grad-reduce-in-bf16"):
        return {"grad_bytes": t.BF16_REDUCE_GRAD, "grad_copy_bytes": t.BF16_REDUCE_COPY,
                "state_precision": "--grad-reduce-in-bf16"}
    return {}


def verl_run(arch, v: dict, megatron: bool, gpu: int, ram: int | None) -> Run:
    """verl's Hydra keys (as the builder emits them, or as a manifest's entrypoint spells them) -> Run."""
    nodes, gpus = int_arg(v, "trainer.nnodes", 1), int_arg(v, "trainer.n_gpus_per_node", 8)
    tp = int_arg(v, MG + "tensor_model_parallel_size", 1) if megatron else 1
    pp = int_arg(v, MG + "pipeline_model_parallel_size", 1) if megatron else 1
    cp = int_arg(v, MG + "context_parallel_size", 1) if megatron else 1
    eng = MG if megatron else FS
    prompt, response = int_arg(v, "data.max_prompt_length", 512), int_arg(v, "data.max_response_length", 512)
    dynamic = bool(v.get(f"{AR}.actor.use_dynamic_bsz", False))
    budget = int_arg(v, f"{AR}.actor.ppo_max_token_len_per_gpu", 16384) if dynamic else None  # actor.yaml L31-33
    micro = int_arg(v, f"{AR}.actor.ppo_micro_batch_size_per_gpu", 1)
    lp_micro = int_arg(v, f"{AR}.rollout.log_prob_micro_batch_size_per_gpu", None)
    lp_budget = int_arg(v, f"{AR}.rollout.log_prob_max_token_len_per_gpu", None) if dynamic else None
    n = int_arg(v, f"{AR}.rollout.n", 1)
    ulysses = int_arg(v, f"{AR}.actor.ulysses_sequence_parallel_size", 1)
    world = nodes * gpus
    dp = max(1, world // (tp * pp * cp) if megatron else world // ulysses)
    mini = int_arg(v, f"{AR}.actor.ppo_mini_batch_size", 256)
    batch = int_arg(v, "data.train_batch_size", 1024)
    recompute = str(v.get(MG + "override_transformer_config.recompute_granularity") or "none") if megatron else (
        # verl's FSDP model config turns gradient checkpointing on unless the run turns it off
        "full" if v.get(f"{AR}.model.enable_gradient_checkpointing", True) else "none")
    lora = int_arg(v, f"{AR}.model.lora.rank", 0) or int_arg(v, f"{AR}.model.lora_rank", 0)
    ref = f"{AR}.ref.{'megatron' if megatron else 'fsdp_config'}.param_offload"
    return Run(
        arch=arch, framework="verl", engine="megatron" if megatron else "fsdp", gpu_bytes=gpu, nodes=nodes,
        gpus_per_node=gpus, node_ram_bytes=ram, tp=tp, pp=pp, cp=cp,
        ep=int_arg(v, MG + "expert_model_parallel_size", 1), etp=int_arg(v, MG + "expert_tensor_parallel_size", None),
        vpp=int_arg(v, MG + "virtual_pipeline_model_parallel_size", None),
        ulysses=ulysses, sequence_parallel=bool(v.get(MG + "sequence_parallel", True)) and tp > 1,
        distributed_optimizer=bool(v.get(MG + "use_distributed_optimizer", True)),  # verl engine.py L198-199
        lora_rank=lora, param_offload=bool(v.get(eng + "param_offload", False)),
        # verl's end-to-end FP8 recipe: override_transformer_config fp8 "hybrid" (docs/low_precision/fp8.md
        # L175-187 @v0.9.0), fp8_param for FP8 parameters (TransformerConfig L581-585)
        fp8_training=megatron and bool(v.get(MG + "override_transformer_config.fp8")),
        fp8_params=megatron and bool(v.get(MG + "override_transformer_config.fp8")
                                     and v.get(MG + "override_transformer_config.fp8_param")),
        grad_offload=bool(v.get(eng + "grad_offload", False)),
        optimizer_offload=bool(v.get(eng + "optimizer_offload", False)), recompute=recompute,
        # Megatron's OptimizerConfig as verl fills it from override_optimizer_config (optimizer.py L335-336)
        cpu_adam_fraction=float_arg(v, OPT + "optimizer_offload_fraction", 0.0)
        if megatron and v.get(OPT + "optimizer_cpu_offload") else 0.0,
        # verl hands override_optimizer_config to Megatron's OptimizerConfig as written (verl utils/megatron/
        # optimizer.py L54-61): the switch works, a dtype given as a string does not reach TE as a dtype, so only
        # the switch is read (its default dtypes)
        **(megatron_precision({"use-precision-aware-optimizer": v.get(OPT + "use_precision_aware_optimizer")})
           if megatron else {}),
        # A micro batch never holds more samples than the GPU's share of what it splits: the mini batch in
        # update_policy, the step's whole batch in compute_log_prob (dp_actor.py: data.split(micro_batch_size))
        seq_len=prompt + response, favourable_mean_seq_len=0, micro_batch=min(micro, max(1, mini * n // dp)),
        token_budget=budget, log_prob_micro=None if lp_micro is None else min(lp_micro, max(1, batch * n // dp)),
        log_prob_budget=lp_budget, step_samples=max(1, mini * n // dp),
        use_ref=bool(v.get(f"{AR}.actor.use_kl_loss") or v.get("algorithm.use_kl_in_reward")),
        ref_offload=bool(v.get(ref, False)), rollout="vllm",
        # verl's model config removes padding by default (_generated_ppo_trainer.yaml L306, model.use_remove_padding:
        # true); without an expected mean length the packed micro batch is still bounded at the longest samples.
        remove_padding=bool(v.get(f"{AR}.model.use_remove_padding", True)),
        # the step computes the entropy only for a non-zero coefficient (dp_actor.py L445-451; actor.yaml L89: 0)
        train_entropy=bool(v.get(f"{AR}.actor.entropy_coeff", 0)),
        rollout_tp=int_arg(v, f"{AR}.rollout.tensor_model_parallel_size", 2),
        # rollout.yaml L452-453 @v0.9.0: "quantization: null", fp8 or torchao; torchao's bytes are not modelled
        rollout_fp8=str(v.get(f"{AR}.rollout.quantization") or "").lower() == "fp8",
        rollout_graphs=not v.get(f"{AR}.rollout.enforce_eager", False),  # rollout.yaml L52
        gmu=float(v.get(f"{AR}.rollout.gpu_memory_utilization", 0.5)),
        max_model_len=int_arg(v, f"{AR}.rollout.max_model_len", prompt + response),
        max_num_seqs=int_arg(v, f"{AR}.rollout.max_num_seqs", 256),
        max_batched_tokens=int_arg(v, f"{AR}.rollout.max_num_batched_tokens", 8192),
        requests_per_step=batch * n,
        critic=verl_critic(v, megatron, micro, dynamic))


def verl_critic(v: dict, megatron: bool, actor_micro: int, actor_dynamic: bool) -> Critic | None:
    """verl's critic from its keys (critic/critic.yaml, dp_critic.yaml; defaults there), or None where the run
    trains none: `critic.enable` when stated, else `algorithm.adv_estimator` gae, verl's default
    (trainer/ppo/utils.py need_critic)."""
    enable = v.get("critic.enable")
    if not (enable if enable is not None else str(v.get("algorithm.adv_estimator", "gae")).lower() == "gae"):
        return None
    engine = "critic.megatron." if megatron else "critic.model.fsdp_config."
    micro = int_arg(v, "critic.ppo_micro_batch_size_per_gpu", actor_micro)
    dynamic = bool(v.get("critic.use_dynamic_bsz", actor_dynamic))
    budget = int_arg(v, "critic.ppo_max_token_len_per_gpu", 32768) if dynamic else None
    return Critic(param_offload=bool(v.get(engine + "param_offload", False)),
                  optimizer_offload=bool(v.get(engine + "optimizer_offload", False)), micro_batch=micro,
                  forward_micro=int_arg(v, "critic.forward_micro_batch_size_per_gpu", micro), token_budget=budget,
                  forward_budget=int_arg(v, "critic.forward_max_token_len_per_gpu", budget) if dynamic else None,
                  checkpointing=bool(v.get("critic.model.enable_gradient_checkpointing", True)),
                  remove_padding=bool(v.get("critic.model.use_remove_padding", False)),
                  ulysses=int_arg(v, "critic.ulysses_sequence_parallel_size", 1),
                  assumed=v.get("critic.model.path") in (None, "") or (
                      f"{AR}.model.path" in v and v["critic.model.path"] != v[f"{AR}.model.path"]))


def miles_run(arch, v: dict, nodes: int, gpu: int, ram: int | None) -> Run:
    """miles' arguments (as the builder emits them with extraArgs' flags, or as a manifest's command spells them;
    bare flags are True) on `nodes` nodes -> Run."""
    colocate = bool(v.get("colocate", False))
    gpus = int_arg(v, "actor-num-gpus-per-node", 8)
    prompt, response = int_arg(v, "rollout-max-prompt-len", 1024), int_arg(v, "rollout-max-response-len", 1024)
    # the context a turn may fill: miles' own cap, else the context SGLang serves (it takes no longer request)
    context = int_arg(v, "rollout-max-context-len", None) or int_arg(v, "sglang-context-length", None)
    one_turn = prompt + response if context is None else min(prompt + response, context)
    longest = max(one_turn, context or 0)  # a multi-turn sample fills the context a turn may fill
    dynamic = bool(v.get("use-dynamic-batch-size", False))
    tp, pp, cp = (int_arg(v, k, 1) for k in ("tensor-model-parallel-size", "pipeline-model-parallel-size",
                                          "context-parallel-size"))
    actor_nodes = int_arg(v, "actor-num-nodes", 1)
    world = (nodes if colocate else actor_nodes) * gpus
    dp = max(1, world // (tp * pp * cp))
    micro = int_arg(v, "micro-batch-size", 1)
    engine_tp = int_arg(v, "rollout-num-gpus-per-engine", 1)
    chunk, graph_bs = t.sglang_settings(gpu, engine_tp, int_arg(v, "sglang-chunked-prefill-size", None),
                                        _sglang_graph_bs(v))
    return Run(
        arch=arch, framework="miles", engine="megatron", gpu_bytes=gpu, nodes=nodes, gpus_per_node=gpus,
        trainer_nodes=None if colocate else actor_nodes, node_ram_bytes=ram, tp=tp, pp=pp, cp=cp,
        ep=int_arg(v, "expert-model-parallel-size", 1), etp=int_arg(v, "expert-tensor-parallel-size", None),
        vpp=int_arg(v, "num-virtual-stages-per-pipeline-rank", None),
        sequence_parallel=bool(v.get("sequence-parallel", False)) and tp > 1,
        # miles turns Megatron's distributed optimizer on for every run, whatever the command says
        # (set_default_megatron_args, miles/backends/megatron_utils/arguments.py L12-14, miles-rl 0.0.2)
        distributed_optimizer=True,
        # --optimizer-cpu-offload with --optimizer-offload-fraction (default 1.0: Megatron arguments.py L2087-2090)
        cpu_adam_fraction=float(v.get("optimizer-offload-fraction", 1.0)) if v.get("optimizer-cpu-offload") else 0.0,
        **megatron_precision(v),
        offload_train=colocate,  # --offload-train is always on with --colocate (slime arguments.py L71-90)
        # --fp8-format e4m3|hybrid, --fp8-param-gather (miles examples/infra_features/low_precision/README.md L17-23)
        fp8_training=bool(v.get("fp8-format")), fp8_params=bool(v.get("fp8-format") and v.get("fp8-param-gather")),
        recompute=str(v.get("recompute-granularity") or "none"), seq_len=longest,
        one_turn_seq_len=one_turn if longest > one_turn else None, favourable_mean_seq_len=0,
        micro_batch=micro,
        # miles packs a micro batch's samples (--qkv-format thd by default: miles utils/arguments.py L136-140,
        # backends/training_utils/data.py get_batch, miles-rl 0.0.2)
        remove_padding=v.get("qkv-format", "thd") == "thd",
        token_budget=int_arg(v, "max-tokens-per-gpu", None) if dynamic else None,
        step_samples=max(1, int_arg(v, "global-batch-size", dp) // dp),
        use_ref=bool(v.get("use-kl-loss") or v.get("kl-coef")), rollout="sglang",
        rollout_tp=engine_tp, gmu=_sglang_fraction(v, gpu, engine_tp, chunk, graph_bs),
        sglang_chunk=chunk, sglang_graph_bs=graph_bs,
        max_model_len=one_turn,
        requests_per_step=int_arg(v, "rollout-batch-size", 1) * int_arg(v, "n-samples-per-prompt", 1))


def _sglang_graph_bs(v: dict) -> int | None:
    """The decode CUDA-graph batch miles hands SGLang (--sglang-*: SGLang's own flags, miles sglang_utils/
    arguments.py L93, L123): 0 when graphs are off, None for SGLang's default. --cuda-graph-max-bs and
    --disable-cuda-graph are SGLang 0.5.16's deprecated aliases (server_args.py L7201-7221)."""
    if v.get("sglang-disable-cuda-graph") or str(v.get("sglang-cuda-graph-backend-decode", "")) == "disabled":
        return 0
    return int_arg(v, "sglang-cuda-graph-max-bs-decode", None) or int_arg(v, "sglang-cuda-graph-max-bs", None)


def _sglang_fraction(v: dict, gpu: int, tp: int, chunk: int, graph_bs: int) -> float:
    """--sglang-mem-fraction-static, else the value SGLang computes itself (miles passes none by default)."""
    stated = v.get("sglang-mem-fraction-static")
    if isinstance(stated, int | float) and not isinstance(stated, bool):
        return float(stated)
    return t.sglang_auto_fraction(gpu, tp, chunk, graph_bs)
