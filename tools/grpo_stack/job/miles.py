"""values -> miles train.py arguments (miles 0.1.0). The only place miles flags are written."""

from __future__ import annotations

from .args import ArgList, BuiltJob
from .spec import Spec

# miles ships the Megatron model-architecture arguments per model as scripts/models/<name>.sh; the
# recipe sources the one named here inside the head pod (miles checks them against the HF config).
MODEL_SCRIPTS = {
    "qwen3-4b": "scripts/models/qwen3-4B.sh",
    "qwen3-8b": "scripts/models/qwen3-8B.sh",
    "qwen3-30b-a3b": "scripts/models/qwen3-30B-A3B.sh",
    "qwen3-235b-a22b": "scripts/models/qwen3-235B-A22B.sh",
    "qwen2.5-7b": "scripts/models/qwen2.5-7B.sh",
    "qwen2.5-72b": "scripts/models/qwen2.5-72B.sh",
    "llama-3.1-8b": "scripts/models/llama3.1-8B.sh",
}


def actor_nodes(spec: Spec) -> int:
    m = spec.get("miles")
    return int(spec.cluster["nodes"]) if m["colocate"] else int(m["actorNodes"] or 0)


def rollout_gpus(spec: Spec) -> int:
    """Colocated: miles overrides rollout GPUs with the actor world. Otherwise: the nodes the actor leaves."""
    gpus = int(spec.cluster["gpusPerNode"])
    if spec.get("miles.colocate"):
        return actor_nodes(spec) * gpus
    return (int(spec.cluster["nodes"]) - actor_nodes(spec)) * gpus


def build_miles(spec: Spec) -> BuiltJob:
    m = spec.get("miles")
    p = spec.get("parallel")
    r = spec.get("rollout")
    out = ArgList()
    v = "values: global.job."
    model_dir = spec.on_storage(spec.get("model.path"))
    ckpt = spec.on_storage(spec.get("trainer.checkpointDir"))

    out.add("hf-checkpoint", model_dir, v + "model.path")
    out.add("ref-load", model_dir, v + "model.path")
    out.add("save", ckpt, v + "trainer.checkpointDir")
    out.add("load", ckpt, v + "trainer.checkpointDir")
    out.add("save-interval", spec.get("trainer.saveFreq"), v + "trainer.saveFreq")
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

    out.add("prompt-data", spec.on_storage(spec.get("data.trainFiles")[0]), v + "data.trainFiles")
    out.add("input-key", "prompt", "default: dapo-math-17k layout")
    out.add("label-key", "label", "default: dapo-math-17k layout")
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

    out.add("advantage-estimator", "grpo", "default: grpo-stack GRPO recipe")
    out.add("use-kl-loss", True, "default: grpo-stack GRPO recipe")
    out.add("kl-loss-coef", 0.0, "default: grpo-stack GRPO recipe")
    out.add("eval-prompt-data", ["eval", spec.on_storage(spec.get("data.valFiles")[0])], v + "data.valFiles")
    out.add("eval-interval", spec.get("trainer.testFreq"), v + "trainer.testFreq")
    if spec.get("reward.kind") in ("service", "external", "sandbox"):  # sandbox: code routes of the reward service
        out.add("rm-url", spec.endpoint("reward", "rewardService"), "endpoint: reward-service in the release namespace")
        out.add("reward-key", "reward", "default: reward-service reply field")
        out.add("log-reward-category", "status", "default: reward-service reply field")
    else:
        out.add("rm-type", "deepscaler", "default: miles rule-based math reward")
    return BuiltJob(
        framework="miles",
        entrypoint=("python3", "/root/miles/train.py"),
        args=tuple(out),
        style="flags",
        notes=(f"model-args-script: /root/miles/{MODEL_SCRIPTS[spec.model.name]}",),
    )
