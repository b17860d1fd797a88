"""values -> miles train.py arguments. The only place miles flags are written.

The build is the one the image pins (images/miles/Dockerfile): radixark/miles and the Megatron-LM tree its image
clones, at the commits recorded in catalog/miles_flags.json. Every flag emitted here is checked against that
catalogue (tests/job/test_miles_flags.py), and `job.miles.extraArgs` is checked when the command is built.
"""

from __future__ import annotations

import posixpath

from ..data.example import MILES_INPUT_KEY, MILES_LABEL_KEYS, MILES_METADATA_KEY
from ..deadline import MILES_SENTINEL
from . import miles_flags
from .args import ArgList, BuildError, BuiltJob, PrepareStep
from .spec import Spec

MILES_ROOT = "/root/miles"  # where the image has miles (WORKDIR /root/miles) ...
MEGATRON_ROOT = "/root/Megatron-LM"  # ... and the Megatron-LM tree miles' Dockerfile clones

# Megatron model-architecture flags ship per model as scripts/models/<name>.sh in miles; only presets whose script
# exists at the pinned miles commit are offered (qwen2.5-72B.sh and llama3.1-8B.sh do not exist there).
MODEL_SCRIPTS = {
    "qwen3-4b": "scripts/models/qwen3-4B.sh",
    "qwen3-8b": "scripts/models/qwen3-8B.sh",
    "qwen3-30b-a3b": "scripts/models/qwen3-30B-A3B.sh",
    "qwen3-235b-a22b": "scripts/models/qwen3-235B-A22B.sh",
    "qwen2.5-7b": "scripts/models/qwen2.5-7B.sh",
}

# The Ray job's environment in miles' own launcher (miles/utils/external_utils/command_utils.py execute_train):
# Megatron on PYTHONPATH (it is a checkout, not an installed package) and one CUDA connection per device, which
# Megatron's communication/computation overlap needs.
RUNTIME_ENV = (
    ("PYTHONPATH", f"{MILES_ROOT}:{MEGATRON_ROOT}"),
    ("CUDA_DEVICE_MAX_CONNECTIONS", "1"),
    ("PYTHONUNBUFFERED", "1"),
)

# extraArgs that cannot work on the cluster this chart builds, with the reason.
REFUSED_EXTRA = {
    "--pin-rollout-manager-to-head": "the chart's Ray head advertises zero CPUs and has no CUDA driver, so the "
                                     "rollout manager (which imports Megatron and transformer_engine) could never "
                                     "be placed there",
    "--megatron-to-hf-mode": "the reference model loads the converted torch_dist checkpoint (raw mode); miles' own "
                             "recipes refuse bridge mode together with a KL reference",
}

CONVERTED_SUFFIX = "_torch_dist"
CONVERT_SCRIPT = f"{MILES_ROOT}/tools/convert_hf_to_torch_dist.py"


def actor_nodes(spec: Spec) -> int:
    m = spec.get("miles")
    return int(spec.cluster["nodes"]) if m["colocate"] else int(m["actorNodes"] or 0)


def rollout_gpus(spec: Spec) -> int:
    """Colocated: miles overrides rollout GPUs with the actor world. Otherwise: the nodes the actor leaves."""
    gpus = int(spec.cluster["gpusPerNode"])
    if spec.get("miles.colocate"):
        return actor_nodes(spec) * gpus
    return (int(spec.cluster["nodes"]) - actor_nodes(spec)) * gpus


def model_script(spec: Spec) -> str:
    preset = spec.get("model.preset")
    if preset not in MODEL_SCRIPTS:
        raise BuildError(f"global.job.model.preset: {preset!r} has no miles model script at the pinned build "
                         f"({miles_flags.pinned_build()}); miles presets: {', '.join(sorted(MODEL_SCRIPTS))}")
    return f"{MILES_ROOT}/{MODEL_SCRIPTS[preset]}"


def converted_dir(spec: Spec) -> str:
    return spec.on_storage(spec.get("model.path")).rstrip("/") + CONVERTED_SUFFIX


def resume_mode(spec: Spec) -> tuple[str, str | None]:
    """(auto | disable | fromPath, path). Absent means disable: never a silent resume of whatever sits in
    trainer.checkpointDir (global.job.resume)."""
    resume = spec.job.get("resume") or {}
    if not isinstance(resume, dict):
        raise BuildError("global.job.resume: expected a mapping with mode (auto|disable|fromPath) and path")
    mode = resume.get("mode", "disable")
    if mode not in ("auto", "disable", "fromPath"):
        raise BuildError(f"global.job.resume.mode: {mode!r} is not auto, disable or fromPath")
    path = resume.get("path")
    if mode == "fromPath":
        if not isinstance(path, str) or not path:
            raise BuildError("global.job.resume.path: required when resume.mode is fromPath")
        return mode, path if posixpath.isabs(path) else spec.on_storage(path)
    return mode, None


def conversion_step(spec: Spec) -> PrepareStep:
    """HF -> Megatron torch_dist, the way miles' own launcher converts (miles/utils/external_utils/command_utils.py
    convert_checkpoint). Needed because the pinned build loads a Hugging Face directory only with
    `--megatron-to-hf-mode bridge`, and its own recipes refuse bridge mode with a KL reference model
    (scripts/run_qwen3_4b.py), so the reference (and a fresh actor) load this converted checkpoint."""
    gpus = int(spec.cluster["gpusPerNode"])
    hf = spec.on_storage(spec.get("model.path"))
    out = converted_dir(spec)
    script = model_script(spec)
    argv = ("bash", "-c", 'source "$0" && exec torchrun --nproc-per-node "$1" "$2" "${MODEL_ARGS[@]}" "${@:3}"',
            script, str(gpus), CONVERT_SCRIPT, "--hf-checkpoint", hf, "--save", out)
    manifest = {"hfCheckpoint": hf, "modelScript": script, "build": miles_flags.pinned_build()}
    return PrepareStep(name="convert-hf-to-torch-dist", argv=argv, num_gpus=gpus, output=out, manifest=manifest,
                       why="--ref-load needs a Megatron checkpoint (raw mode)")


_V = "values: global.job."
UPSTREAM = "default: miles scripts/run-qwen3-4B.sh"
# (values key under global.job.optim, miles/Megatron flag, the setting of miles' own GRPO recipes or None when
# they leave it to Megatron's default, which is then not emitted)
_OPTIM_FLAGS = (("lr", "lr", 1e-6), ("warmupSteps", "lr-warmup-iters", None),
                ("schedule", "lr-decay-style", "constant"), ("weightDecay", "weight-decay", 0.1),
                ("gradClip", "clip-grad", None))
_VALIDATION_FLAGS = (("n", "n-samples-per-eval-prompt"), ("temperature", "eval-temperature"),
                     ("topP", "eval-top-p"))


def neutral_knobs(spec: Spec, out: ArgList) -> None:
    """The framework-neutral run knobs of global.job (optim, kl, entropyCoef, clipRatio, validation, seed, the
    trackers) -> miles flags. A knob the values leave out takes the setting of miles' own GRPO recipes
    (scripts/run-qwen3-4B.sh, run_qwen3_30b_a3b.py) where they set one, else miles'/Megatron's default.
    global.job.resume is mapped with --load/--save in build_miles."""
    out.add("optimizer", "adam", UPSTREAM)
    for key, flag, upstream in _OPTIM_FLAGS:
        if (value := spec.opt(f"optim.{key}")) is not None:
            out.add(flag, value, _V + f"optim.{key}")
        elif upstream is not None:
            out.add(flag, upstream, UPSTREAM)
    out.add("adam-beta1", 0.9, UPSTREAM)
    out.add("adam-beta2", 0.98, UPSTREAM)
    out.add("advantage-estimator", "grpo", "default: grpo-stack GRPO recipe")
    kl = spec.opt("kl")
    if kl is None:  # the recipes keep a KL loss term at coefficient 0 (the reference model is still loaded)
        out.add("use-kl-loss", True, UPSTREAM)
        out.add("kl-loss-coef", 0.0, UPSTREAM)
        out.add("kl-loss-type", "low_var_kl", UPSTREAM)
    else:
        if kl["placement"] == "loss":  # a KL loss term (miles loss.py)
            out.add("use-kl-loss", True, _V + "kl.placement")
            out.add("kl-loss-coef", kl["coef"], _V + "kl.coef")
        else:  # a KL penalty on the reward before the advantages (miles advantages.py)
            out.add("kl-coef", kl["coef"], _V + "kl.coef")
        out.add("kl-loss-type", kl["estimator"], _V + "kl.estimator")
    entropy = spec.opt("entropyCoef")
    out.add("entropy-coef", 0.0 if entropy is None else entropy, UPSTREAM if entropy is None else _V + "entropyCoef")
    if spec.opt("clipRatio") is not None:
        out.add("eps-clip", spec.get("clipRatio.low"), _V + "clipRatio.low")
        out.add("eps-clip-high", spec.get("clipRatio.high"), _V + "clipRatio.high")
    else:
        out.add("eps-clip", 0.2, UPSTREAM)
        out.add("eps-clip-high", 0.28, UPSTREAM)
    for key, flag in _VALIDATION_FLAGS:
        if (value := spec.opt(f"validation.{key}")) is not None:
            out.add(flag, value, _V + f"validation.{key}")
    if (seed := spec.opt("seed")) is not None:
        out.add("seed", seed, _V + "seed")
    t = spec.get("trainer")
    loggers = set(t["logger"])
    if "tensorboard" in loggers:  # the directory itself comes from TENSORBOARD_DIR on the Ray pods
        out.add("use-tensorboard", True, _V + "trainer.logger")
        out.add("tb-project-name", t["project"], _V + "trainer.project")
        out.add("tb-experiment-name", t["experiment"], _V + "trainer.experiment")
    if "wandb" in loggers:
        out.add("use-wandb", True, _V + "trainer.logger")
        out.add("wandb-project", t["project"], _V + "trainer.project")
        out.add("wandb-group", t["experiment"], _V + "trainer.experiment")
    if "mlflow" in loggers:
        out.add("use-mlflow", True, _V + "trainer.logger")
        out.add("mlflow-experiment-name", t["project"], _V + "trainer.project")
        out.add("mlflow-run-name", t["experiment"], _V + "trainer.experiment")
    if (port := spec.opt("supervision.stepMetricsPort")) is not None:
        # miles' own Prometheus backend: a collector on the driver's node serves every number miles logs; the
        # submit reads its steps from there (stepmetrics/miles_steps.py) and serves them as the verl runs' are.
        out.add("use-prometheus", True, _V + "supervision.stepMetricsPort")
        out.add("prometheus-port", port, _V + "supervision.stepMetricsPort")
        out.add("prometheus-run-name", t["experiment"], _V + "trainer.experiment")


def reward_dispatch(spec: Spec) -> str:
    """"service" when miles posts each sample to a reward endpoint (remote_rm), "builtin" for miles' own scorer.
    kind sandbox is the reward service's code routes (it calls SandboxFusion), so it dispatches as service."""
    return "builtin" if spec.get("reward.kind") == "builtin" else "service"


def reward_url(spec: Spec) -> str:
    """The reward endpoint remote_rm posts to (the chart renders an external url into the same endpoint)."""
    if spec.get("reward.kind") == "sandbox":  # the service's code routes need SandboxFusion in the release
        spec.endpoint("sandbox", "sandboxFusion")
    return spec.endpoint("reward", "rewardService")


def build_miles(spec: Spec) -> BuiltJob:
    m = spec.get("miles")
    p = spec.get("parallel")
    r = spec.get("rollout")
    out = ArgList()
    v = "values: global.job."
    model_dir = spec.on_storage(spec.get("model.path"))
    ckpt = spec.on_storage(spec.get("trainer.checkpointDir"))
    script = model_script(spec)
    convert = conversion_step(spec)
    upstream = "default: miles scripts/run-qwen3-4B.sh"

    out.add("hf-checkpoint", model_dir, v + "model.path")
    out.add("ref-load", convert.output, "derived: model.path converted to torch_dist before training")
    out.add("save", ckpt, v + "trainer.checkpointDir")
    mode, path = resume_mode(spec)
    if mode == "auto":  # miles falls back to --ref-load when this directory has no tracker yet
        out.add("load", ckpt, v + "resume.mode=auto (trainer.checkpointDir)")
    elif mode == "fromPath":
        out.add("load", path, v + "resume.path")
    out.add("save-interval", spec.get("trainer.saveFreq"), v + "trainer.saveFreq")
    if spec.opt("deadline"):
        # The supervisor creates this file one grace period before the deadline (grpo_stack.deadline).
        out.add("save-trigger-sentinel", posixpath.join(ckpt, MILES_SENTINEL), v + "deadline")
    out.add("actor-num-nodes", actor_nodes(spec),
            "values: global.cluster.nodes" if m["colocate"] else v + "miles.actorNodes")
    out.add("actor-num-gpus-per-node", spec.cluster["gpusPerNode"], "values: global.cluster.gpusPerNode")
    out.add("colocate", bool(m["colocate"]), v + "miles.colocate")
    if not m["colocate"]:
        out.add("rollout-num-gpus", rollout_gpus(spec), "derived: (cluster.nodes - miles.actorNodes) x gpusPerNode")
    out.add("rollout-num-gpus-per-engine", r["tensorParallel"], v + "rollout.tensorParallel")
    out.add("sglang-mem-fraction-static", r["gpuMemoryUtilization"], v + "rollout.gpuMemoryUtilization")

    out.add("tensor-model-parallel-size", p["tensor"], v + "parallel.tensor")
    out.add("sequence-parallel", bool(p["sequenceParallel"]), v + "parallel.sequenceParallel")
    out.add("pipeline-model-parallel-size", p["pipeline"], v + "parallel.pipeline")
    out.add("context-parallel-size", p["context"], v + "parallel.context")
    out.add("expert-model-parallel-size", p["expert"], v + "parallel.expert")
    if p.get("expertTensor") is not None:
        out.add("expert-tensor-parallel-size", p["expertTensor"], v + "parallel.expertTensor")
    if p.get("virtualPipeline") is not None:
        out.add("num-virtual-stages-per-pipeline-rank", p["virtualPipeline"], v + "parallel.virtualPipeline")
    # Activation recompute of every upstream GRPO recipe for these sizes (run-qwen3-4B.sh, run_qwen3_30b_a3b.py).
    out.add("recompute-granularity", "full", upstream)
    out.add("recompute-method", "uniform", upstream)
    out.add("recompute-num-layers", 1, upstream)
    # Megatron's dropout default is 0.1 (TransformerConfig); RL fine-tuning runs without dropout.
    out.add("attention-dropout", 0.0, upstream + " (Megatron default 0.1)")
    out.add("hidden-dropout", 0.0, upstream + " (Megatron default 0.1)")
    out.add("accumulate-allreduce-grads-in-fp32", True, upstream)
    out.add("attention-softmax-in-fp32", True, upstream)
    out.add("attention-backend", "flash", upstream)

    out.add("prompt-data", spec.on_storage(spec.get("data.trainFiles")[0]), v + "data.trainFiles")
    dispatch = reward_dispatch(spec)
    out.add("input-key", MILES_INPUT_KEY, "derived: grpo-data miles layout")
    out.add("label-key", MILES_LABEL_KEYS[dispatch], "derived: grpo-data miles layout for reward.kind")
    out.add("metadata-key", MILES_METADATA_KEY, "derived: grpo-data miles layout")
    out.add("apply-chat-template", True, "default: grpo-stack GRPO recipe")
    out.add("rollout-shuffle", True, "default: grpo-stack GRPO recipe")
    out.add("num-rollout", m["numRollout"], v + "miles.numRollout")
    out.add("rollout-batch-size", m["rolloutBatchSize"], v + "miles.rolloutBatchSize")
    out.add("n-samples-per-prompt", r["samplesPerPrompt"], v + "rollout.samplesPerPrompt")
    out.add("rollout-max-prompt-len", spec.get("lengths.maxPrompt"), v + "lengths.maxPrompt")
    out.add("rollout-max-response-len", spec.get("lengths.maxResponse"), v + "lengths.maxResponse")
    out.add("rollout-temperature", r["temperature"], v + "rollout.temperature")
    out.add("global-batch-size", m["globalBatchSize"], v + "miles.globalBatchSize")
    out.add("micro-batch-size", m["microBatchSize"], v + "miles.microBatchSize")
    out.add("use-dynamic-batch-size", bool(m["useDynamicBatchSize"]), v + "miles.useDynamicBatchSize")
    if m["useDynamicBatchSize"]:
        out.add("max-tokens-per-gpu", m["maxTokensPerGpu"], v + "miles.maxTokensPerGpu")

    neutral_knobs(spec, out)
    # name/path pairs, one token each (miles pairs them up in _resolve_eval_datasets)
    out.add("eval-prompt-data", ["eval", spec.on_storage(spec.get("data.valFiles")[0])], v + "data.valFiles")
    out.add("eval-interval", spec.get("trainer.testFreq"), v + "trainer.testFreq")
    if dispatch == "service":
        # miles calls remote_rm only when --rm-type (or a sample's metadata.rm_type) says so; with --rm-url alone
        # async_rm raises NotImplementedError("Rule-based RM type is not specified.") at the first reward.
        out.add("rm-type", "remote_rm", "derived: reward.kind " + spec.get("reward.kind"))
        out.add("rm-url", reward_url(spec), "endpoint: reward.kind " + spec.get("reward.kind"))
        out.add("reward-key", "reward", "default: reward-service reply field")
        out.add("log-reward-category", "status", "default: reward-service reply field")
    else:
        out.add("rm-type", "deepscaler", "default: miles rule-based math reward")
    extra, replaced = extra_args(spec, out)
    return BuiltJob(
        framework="miles",
        entrypoint=("python3", f"{MILES_ROOT}/train.py"),
        args=tuple(a for a in out if a.key not in replaced),
        style="flags",
        notes=(f"model-args-script: {script}", f"miles-build: {miles_flags.pinned_build()}"),
        env=RUNTIME_ENV,
        prepare=(convert,),
        extra=extra,
    )


def extra_args(spec: Spec, typed: ArgList) -> tuple[tuple[str, ...], set[str]]:
    """`job.miles.extraArgs`: raw flags for what the values do not type, checked against the catalogue.

    A flag set from the values (or derived from them) is refused under any of its spellings, even when the values
    turned it off: it would silently conflict. A flag the builder only defaults (source "default: ...") is
    replaced by the extraArgs one. Returns the tokens and the keys of the replaced defaults."""
    raw = (spec.get("miles") or {}).get("extraArgs") or []
    key = "global.job.miles.extraArgs"
    if not isinstance(raw, list) or not all(isinstance(t, str) for t in raw):
        raise BuildError(f"{key}: expected a list of strings, e.g. [\"--lr-warmup-iters\", \"10\"]")
    groups, errors = miles_flags.split_flags(list(raw))
    if errors:
        raise BuildError(f"{key}: {errors[0]}")
    owned: dict[str, tuple[str, str]] = {}
    for a in typed:
        for alias in miles_flags.dests(f"--{a.key}"):
            owned[alias] = (a.key, a.source)
    # Where training resumes from is global.job.resume's, also when it emits no --load (mode disable).
    for alias in miles_flags.dests("--load"):
        owned.setdefault(alias, ("load", "values: global.job.resume.mode"))
    seen: set[str] = set()
    replaced: set[str] = set()
    for flag, _ in groups:
        if flag in REFUSED_EXTRA:
            raise BuildError(f"{key}: {flag} is refused: {REFUSED_EXTRA[flag]}")
        if flag in owned:
            arg_key, source = owned[flag]
            if not source.startswith("default:"):
                raise BuildError(f"{key}: {flag} is set from {source.split(': ', 1)[-1]} ({source.split(':')[0]}); "
                                 "change it there")
            replaced.add(arg_key)
        aliases = miles_flags.dests(flag)
        if aliases & seen:
            raise BuildError(f"{key}: {flag} is given twice")
        seen |= aliases
    return tuple(raw), replaced
