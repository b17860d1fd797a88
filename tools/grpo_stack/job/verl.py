"""values -> verl command-line overrides (verl 0.9.1, from the image catalogue). The only place verl keys are
written; each optional knob is emitted only when the values set it, so verl's own default applies otherwise."""

from __future__ import annotations

from ..deadline import VERL_ASSUMED_SAVE_S, verl_redundant_time
from .args import ArgList, BuildError, BuiltJob, hydra_override
from .spec import Spec, job_deadline

AR = "actor_rollout_ref"
# The verl reward function that calls the reward service; images/verl copies it to this path.
REMOTE_REWARD_FN = "/opt/grpo-stack/verl_remote_reward.py"
GRPO_DEFAULT = "default: grpo-stack GRPO recipe"
V = "values: global.job."
# vLLM's LoRA kernels use programmatic dependent launch (PDL), which breaks LoRA rollouts on Blackwell GPUs;
# VLLM_LORA_DISABLE_PDL=1 turns it off. It must reach the vLLM server actors, so it goes into the Ray runtime env
# verl passes to ray.init (inherited by every actor of the job), not into one pod's shell.
BLACKWELL_INSTANCES = ("p6-b200.", "p6-b300.", "p6e-gb200.", "p6e-gb300.")
LORA_PDL_ENV = "ray_kwargs.ray_init.runtime_env.env_vars.VLLM_LORA_DISABLE_PDL"


def build_verl(spec: Spec) -> BuiltJob:
    job = spec.job
    megatron = job["backend"] == "megatron"
    batch = spec.get("verl.batch")
    out = ArgList()
    v = V

    out.add("algorithm.adv_estimator", "grpo", GRPO_DEFAULT)
    out.add("data.train_files", [spec.on_storage(f) for f in spec.get("data.trainFiles")], v + "data.trainFiles")
    out.add("data.val_files", [spec.on_storage(f) for f in spec.get("data.valFiles")], v + "data.valFiles")
    out.add("data.train_batch_size", batch["trainBatchSize"], v + "verl.batch.trainBatchSize")
    out.add("data.max_prompt_length", spec.get("lengths.maxPrompt"), v + "lengths.maxPrompt")
    out.add("data.max_response_length", spec.get("lengths.maxResponse"), v + "lengths.maxResponse")
    out.add("data.filter_overlong_prompts", True, GRPO_DEFAULT)
    out.add("data.truncation", "error", GRPO_DEFAULT)

    out.add(f"{AR}.model.path", spec.on_storage(spec.get("model.path")), v + "model.path")
    _lora(spec, out, megatron)
    out.add(f"{AR}.actor.ppo_mini_batch_size", batch["ppoMiniBatchSize"], v + "verl.batch.ppoMiniBatchSize")
    out.add(f"{AR}.actor.use_dynamic_bsz", batch["useDynamicBsz"], v + "verl.batch.useDynamicBsz")
    if batch["useDynamicBsz"]:
        out.add(f"{AR}.actor.ppo_max_token_len_per_gpu", batch["ppoMaxTokenLenPerGpu"],
                v + "verl.batch.ppoMaxTokenLenPerGpu")
    else:
        out.add(f"{AR}.actor.ppo_micro_batch_size_per_gpu", batch["ppoMicroBatchSizePerGpu"],
                v + "verl.batch.ppoMicroBatchSizePerGpu")
        lp = batch["logProbMicroBatchSizePerGpu"]
        out.add(f"{AR}.rollout.log_prob_micro_batch_size_per_gpu", lp, v + "verl.batch.logProbMicroBatchSizePerGpu")
        out.add(f"{AR}.ref.log_prob_micro_batch_size_per_gpu", lp, v + "verl.batch.logProbMicroBatchSizePerGpu")
    _parallel(spec, out, megatron)
    run_knobs(spec, out, megatron)

    rollout = spec.get("rollout")
    image = spec.image
    out.add(f"{AR}.rollout.name", image.rollout_engine,
            f"image: {image.repository}:{image.tag} carries {image.rollout_engine} {image.rollout_engine_version}")
    out.add(f"{AR}.rollout.n", rollout["samplesPerPrompt"], v + "rollout.samplesPerPrompt")
    out.add(f"{AR}.rollout.tensor_model_parallel_size", rollout["tensorParallel"], v + "rollout.tensorParallel")
    out.add(f"{AR}.rollout.gpu_memory_utilization", rollout["gpuMemoryUtilization"],
            v + "rollout.gpuMemoryUtilization")
    out.add(f"{AR}.rollout.max_model_len", spec.max_model_len,
            v + "rollout.maxModelLen" if rollout.get("maxModelLen") else "derived: lengths.maxPrompt + maxResponse")
    out.add(f"{AR}.rollout.temperature", rollout["temperature"], v + "rollout.temperature")

    _reward(spec, out)
    _trainer(spec, out)
    config_name = "ppo_megatron_trainer" if megatron else "ppo_trainer"
    _overrides(spec, out, config_name, megatron)
    for arg in out:  # every value must read back unchanged through Hydra's grammar: refused here, at its key
        hydra_override(arg)
    return BuiltJob(
        framework="verl",
        entrypoint=("python3", "-m", "verl.trainer.main_ppo", f"--config-name={config_name}"),
        args=tuple(out),
        style="hydra",
    )


# Neutral estimator name -> verl's kl_loss_type / kl_penalty spelling (core_algos.kl_penalty accepts both).
KL_ESTIMATORS = {"k1": "kl", "k2": "mse", "k3": "k3", "low_var_kl": "low_var_kl"}
RESUME_MODES = {"auto": "auto", "disable": "disable", "fromPath": "resume_path"}


def run_knobs(spec: Spec, out: ArgList, megatron: bool) -> None:
    """The run knobs of global.job (optim, kl, entropy, clip, loss aggregation, resume, offload, validation,
    seed). Each verl key is cited in the schema description; absent knobs are not emitted (verl's default)."""
    actor = f"{AR}.actor."
    engine = actor + ("megatron." if megatron else "fsdp_config.")
    optim = actor + "optim."
    for key, verl_key in (("lr", "lr"), ("warmupSteps", "lr_warmup_steps"), ("weightDecay", "weight_decay"),
                          ("gradClip", "clip_grad")):
        if (value := spec.opt(f"optim.{key}")) is not None:
            out.add(optim + verl_key, value, V + f"optim.{key}")
    if (schedule := spec.opt("optim.schedule")) is not None:
        # verl's FSDP optimizer calls it lr_scheduler_type, the Megatron one lr_decay_style (same two names).
        out.add(optim + ("lr_decay_style" if megatron else "lr_scheduler_type"), schedule, V + "optim.schedule")

    kl = spec.opt("kl")
    if kl is not None:
        estimator = KL_ESTIMATORS[kl["estimator"]]
        if kl["placement"] == "loss":
            out.add(actor + "use_kl_loss", True, V + "kl.placement")
            out.add(actor + "kl_loss_coef", kl["coef"], V + "kl.coef")
            out.add(actor + "kl_loss_type", estimator, V + "kl.estimator")
        else:
            out.add("algorithm.use_kl_in_reward", True, V + "kl.placement")
            out.add("algorithm.kl_ctrl.kl_coef", kl["coef"], V + "kl.coef")
            out.add("algorithm.kl_penalty", estimator, V + "kl.estimator")
    if (entropy := spec.opt("entropyCoef")) is not None:
        out.add(actor + "entropy_coeff", entropy, V + "entropyCoef")
    if spec.opt("clipRatio") is not None:
        out.add(actor + "clip_ratio_low", spec.get("clipRatio.low"), V + "clipRatio.low")
        out.add(actor + "clip_ratio_high", spec.get("clipRatio.high"), V + "clipRatio.high")
    if (agg := spec.opt("lossAggregation")) is not None:
        out.add(actor + "loss_agg_mode", agg, V + "lossAggregation")
    if spec.opt("offload") is not None:
        out.add(engine + "param_offload", spec.get("offload.params"), V + "offload.params")
        out.add(engine + "optimizer_offload", spec.get("offload.optimizer"), V + "offload.optimizer")
    if (seed := spec.opt("seed")) is not None:
        out.add(engine + "seed", seed, V + "seed")
        out.add(f"{AR}.rollout.seed", seed, V + "seed")
        out.add("data.seed", seed, V + "seed")
    val = f"{AR}.rollout.val_kwargs."
    if (n := spec.opt("validation.n")) is not None:
        out.add(val + "n", n, V + "validation.n")
    if (temperature := spec.opt("validation.temperature")) is not None:
        out.add(val + "temperature", temperature, V + "validation.temperature")
        # verl ignores the temperature unless do_sample is on (its default is greedy, do_sample false).
        out.add(val + "do_sample", temperature > 0, "derived: validation.temperature > 0")
    if (top_p := spec.opt("validation.topP")) is not None:
        out.add(val + "top_p", top_p, V + "validation.topP")
    resume = spec.opt("resume.mode", "disable")
    out.add("trainer.resume_mode", RESUME_MODES[resume],
            V + "resume.mode" if spec.opt("resume") else "default: grpo-stack fails closed (verl's own is auto)")
    if resume == "fromPath":
        path = spec.opt("resume.path")
        if path is None:
            raise BuildError("global.job.resume.path: required when resume.mode is fromPath")
        out.add("trainer.resume_from_path", spec.on_storage(path), V + "resume.path")


# verl keys the typed values own even when the values leave them out (then verl's default applies): an override
# of one would write the same fact twice. Keys the build emitted are owned too (by the source they name).
def owned_keys(megatron: bool) -> dict[str, str]:
    engine = f"{AR}.actor." + ("megatron." if megatron else "fsdp_config.")
    optim = f"{AR}.actor.optim."
    actor = f"{AR}.actor."
    val = f"{AR}.rollout.val_kwargs."
    lora = ({f"{AR}.model.lora.{k}": f"lora.{v}" for k, v in (("rank", "rank"), ("alpha", "alpha"),
                                                               ("target_modules", "targetModules"))}
            if megatron else {f"{AR}.model.lora_rank": "lora.rank", f"{AR}.model.lora_alpha": "lora.alpha",
                              f"{AR}.model.target_modules": "lora.targetModules"})
    return {
        optim + "lr": "optim.lr", optim + "lr_warmup_steps": "optim.warmupSteps",
        optim + "lr_warmup_steps_ratio": "optim.warmupSteps", optim + "weight_decay": "optim.weightDecay",
        optim + "clip_grad": "optim.gradClip",
        optim + ("lr_decay_style" if megatron else "lr_scheduler_type"): "optim.schedule",
        actor + "use_kl_loss": "kl", actor + "kl_loss_coef": "kl.coef", actor + "kl_loss_type": "kl.estimator",
        "algorithm.use_kl_in_reward": "kl", "algorithm.kl_ctrl.kl_coef": "kl.coef",
        "algorithm.kl_penalty": "kl.estimator", actor + "entropy_coeff": "entropyCoef",
        actor + "clip_ratio": "clipRatio", actor + "clip_ratio_low": "clipRatio.low",
        actor + "clip_ratio_high": "clipRatio.high", actor + "loss_agg_mode": "lossAggregation",
        engine + "param_offload": "offload.params", engine + "optimizer_offload": "offload.optimizer",
        engine + "seed": "seed", f"{AR}.rollout.seed": "seed", "data.seed": "seed",
        val + "n": "validation.n", val + "temperature": "validation.temperature", val + "top_p": "validation.topP",
        val + "do_sample": "validation.temperature", "trainer.resume_mode": "resume.mode",
        "trainer.resume_from_path": "resume.path", "trainer.max_actor_ckpt_to_keep": "trainer.keepCheckpoints",
        "trainer.esi_redundant_time": "deadline",
        **lora,
    }


def _overrides(spec: Spec, out: ArgList, config_name: str, megatron: bool) -> None:
    """job.verl.overrides: only verl config keys (the catalogue), never one a typed key owns."""
    from ..catalog import verl_keys

    overrides = spec.opt("verl.overrides") or {}
    known = verl_keys.keys(config_name)
    owned = owned_keys(megatron)
    emitted = {a.key: a.source for a in out}
    for key, value in overrides.items():
        where = f"global.job.verl.overrides.{key}"
        if key in owned:
            raise BuildError(f"{where}: owned by a typed key; set global.job.{owned[key]} instead")
        if key in emitted:
            source = emitted[key].removeprefix("values: ")
            raise BuildError(f"{where}: already set from {source}; change that instead")
        refusal = verl_keys.type_refusal(config_name, key, value)
        if refusal:
            raise BuildError(f"{where}: {refusal}")
        if key in known:
            out.add(key, value, f"values: {where}")
        elif verl_keys.open_map(config_name, key):
            out.add(f"+{key}", value, f"values: {where}")  # Hydra adds keys to an open map only with +
        else:
            import difflib

            near = difflib.get_close_matches(key, known, n=1)
            hint = f" (did you mean {near[0]}?)" if near else ""
            raise BuildError(f"{where}: not a verl {verl_keys.version()} config key of {config_name}{hint}")


def _lora(spec: Spec, out: ArgList, megatron: bool) -> None:
    lora = spec.opt("lora")
    if lora is None:  # null or absent: full fine-tuning
        return
    v = "values: global.job.lora."
    instance = str(spec.cluster.get("gpuInstanceType", "")).removeprefix("ml.")
    if instance.startswith(BLACKWELL_INSTANCES):
        # '+': verl's config has no env_vars key; a string (written quoted): Ray requires string env values.
        out.add("+" + LORA_PDL_ENV, "1", "derived: LoRA rollouts on Blackwell (global.cluster.gpuInstanceType)")
    if megatron:
        out.add(f"{AR}.model.lora.rank", lora["rank"], v + "rank")
        out.add(f"{AR}.model.lora.alpha", lora["alpha"], v + "alpha")
        # verl's Megatron LoRA already targets every linear layer; other choices are listed explicitly.
        if lora["targetModules"] != "all-linear":
            out.add(f"{AR}.model.lora.target_modules", lora["targetModules"].split(","), v + "targetModules")
    else:
        out.add(f"{AR}.model.lora_rank", lora["rank"], v + "rank")
        out.add(f"{AR}.model.lora_alpha", lora["alpha"], v + "alpha")
        # A comma-separated list must go to Hydra as a list: `a,b` unquoted is an ambiguous sweep value.
        targets = lora["targetModules"]
        out.add(f"{AR}.model.target_modules", targets.split(",") if "," in targets else targets, v + "targetModules")


def _parallel(spec: Spec, out: ArgList, megatron: bool) -> None:
    p = spec.get("parallel")
    v = "values: global.job.parallel."
    if not megatron:
        out.add(f"{AR}.actor.ulysses_sequence_parallel_size", p["ulysses"], v + "ulysses")
        out.add(f"{AR}.model.use_remove_padding", True, "default: required by Ulysses sequence parallelism")
        return
    m = f"{AR}.actor.megatron."
    out.add(m + "tensor_model_parallel_size", p["tensor"], v + "tensor")
    out.add(m + "pipeline_model_parallel_size", p["pipeline"], v + "pipeline")
    out.add(m + "context_parallel_size", p["context"], v + "context")
    out.add(m + "expert_model_parallel_size", p["expert"], v + "expert")
    if p.get("expertTensor") is not None:
        out.add(m + "expert_tensor_parallel_size", p["expertTensor"], v + "expertTensor")
    if p.get("virtualPipeline") is not None:
        out.add(m + "virtual_pipeline_model_parallel_size", p["virtualPipeline"], v + "virtualPipeline")
    out.add(m + "sequence_parallel", p["sequenceParallel"], v + "sequenceParallel")


def _reward(spec: Spec, out: ArgList) -> None:
    kind = spec.get("reward.kind")
    if kind in ("service", "external", "sandbox"):
        spec.endpoint("reward", "rewardService")  # fails early when neither the component nor a url is set
        if kind == "sandbox":
            # Code is scored by the reward service's `code` routes through SandboxFusion, never by verl's default
            # scorer, which scores a sandbox outage as a wrong answer (0.0).
            spec.endpoint("sandbox", "sandboxFusion")
        out.add("reward.custom_reward_function.path", REMOTE_REWARD_FN, "default: baked into images/verl")
        out.add("reward.custom_reward_function.name", "compute_score", "default: images/reward-service client")


def _trainer(spec: Spec, out: ArgList) -> None:
    t = spec.get("trainer")
    v = "values: global.job.trainer."
    out.add("trainer.nnodes", spec.cluster["nodes"], "values: global.cluster.nodes")
    out.add("trainer.n_gpus_per_node", spec.cluster["gpusPerNode"], "values: global.cluster.gpusPerNode")
    out.add("trainer.project_name", t["project"], v + "project")
    out.add("trainer.experiment_name", t["experiment"], v + "experiment")
    out.add("trainer.total_epochs", t["totalEpochs"], v + "totalEpochs")
    out.add("trainer.save_freq", t["saveFreq"], v + "saveFreq")
    out.add("trainer.test_freq", t["testFreq"], v + "testFreq")
    out.add("trainer.default_local_dir", spec.on_storage(t["checkpointDir"]), v + "checkpointDir")
    if t.get("keepCheckpoints") is not None:
        out.add("trainer.max_actor_ckpt_to_keep", t["keepCheckpoints"], v + "keepCheckpoints")
    # verl's own `file` tracker: one JSON line a step, the step file the supervised submit's step metrics and stall
    # detector read (VERL_FILE_LOGGER_PATH, set by the submit per attempt; job/supervised.py).
    out.add("trainer.logger", [*t["logger"], "file"], v + "logger, plus verl's file tracker")
    out.add("trainer.use_v1", spec.get("verl.useV1Trainer"), "values: global.job.verl.useV1Trainer")
    deadline = job_deadline(spec)
    if deadline is not None and not spec.get("verl.useV1Trainer"):
        # The end time itself reaches verl through the Ray job's env (grpo_stack.deadline.runtime_env), set by the
        # submit, which knows when the run starts; the v1 trainer reads neither (grpo-lint GRPO907).
        out.add("trainer.esi_redundant_time", verl_redundant_time(deadline),
                f"derived: global.job.deadline.marginMinutes + the checkpoint write beyond verl's assumed "
                f"{VERL_ASSUMED_SAVE_S} s ({deadline.write_source})")
