"""values -> verl command-line overrides (verl 0.8.0 / 0.9.1). The only place verl keys are written."""

from __future__ import annotations

from .args import ArgList, BuiltJob
from .spec import Spec

AR = "actor_rollout_ref"
# The verl reward function that calls the reward service; images/verl copies it to this path.
REMOTE_REWARD_FN = "/opt/grpo-stack/verl_remote_reward.py"
GRPO_DEFAULT = "default: grpo-stack GRPO recipe"
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
    v = "values: global.job."

    out.add("algorithm.adv_estimator", "grpo", GRPO_DEFAULT)
    out.add("algorithm.use_kl_in_reward", False, GRPO_DEFAULT)
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
    out.add(f"{AR}.actor.use_kl_loss", True, GRPO_DEFAULT)
    out.add(f"{AR}.actor.kl_loss_coef", 0.001, GRPO_DEFAULT)
    out.add(f"{AR}.actor.kl_loss_type", "low_var_kl", GRPO_DEFAULT)
    out.add(f"{AR}.actor.entropy_coeff", 0, GRPO_DEFAULT)
    _parallel(spec, out, megatron)

    rollout = spec.get("rollout")
    out.add(f"{AR}.rollout.name", "vllm", "default: grpo-stack uses vLLM for verl rollouts")
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
    return BuiltJob(
        framework="verl",
        entrypoint=("python3", "-m", "verl.trainer.main_ppo", f"--config-name={config_name}"),
        args=tuple(out),
        style="hydra",
    )


def _lora(spec: Spec, out: ArgList, megatron: bool) -> None:
    lora = spec.get("lora")
    if lora["rank"] == 0:
        return
    v = "values: global.job.lora."
    instance = str(spec.cluster.get("gpuInstanceType", "")).removeprefix("ml.")
    if instance.startswith(BLACKWELL_INSTANCES):
        # '+': verl's config has no env_vars key; quoted: Ray requires string env values.
        out.add("+" + LORA_PDL_ENV, "'1'", "derived: LoRA rollouts on Blackwell (global.cluster.gpuInstanceType)")
    if megatron:
        out.add(f"{AR}.model.lora.rank", lora["rank"], v + "rank")
        out.add(f"{AR}.model.lora.alpha", lora["alpha"], v + "alpha")
        # verl's Megatron LoRA already targets every linear layer; other choices are listed explicitly.
        if lora["targetModules"] != "all-linear":
            out.add(f"{AR}.model.lora.target_modules", lora["targetModules"].split(","), v + "targetModules")
    else:
        out.add(f"{AR}.model.lora_rank", lora["rank"], v + "rank")
        out.add(f"{AR}.model.lora_alpha", lora["alpha"], v + "alpha")
        out.add(f"{AR}.model.target_modules", lora["targetModules"], v + "targetModules")


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
    if kind in ("service", "external"):
        spec.endpoint("reward", "rewardService")  # fails early when neither the component nor a url is set
        out.add("reward.custom_reward_function.path", REMOTE_REWARD_FN, "default: baked into images/verl")
        out.add("reward.custom_reward_function.name", "compute_score", "default: images/reward-service client")
    elif kind == "sandbox":
        out.add("reward.sandbox_fusion.url", spec.endpoint("sandbox", "sandboxFusion"),
                "endpoint: sandbox-fusion Service in the release namespace")


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
    out.add("trainer.logger", list(t["logger"]), v + "logger")
    if spec.get("frameworkVersion") != "0.8.0":
        out.add("trainer.use_v1", spec.get("verl.useV1Trainer"), "values: global.job.verl.useV1Trainer")
