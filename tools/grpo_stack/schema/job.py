"""`global.job`: the training run, framework-neutral where the concept is shared.

Every number here is typed once. The job builder (grpo_stack.job) turns it into verl overrides or miles
arguments; the chart only serialises it into the job ConfigMap.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from .common import RelPath, Strict

VERL_VERSIONS = ("0.8.0", "0.9.1")
MILES_VERSIONS = ("0.1.0",)


class ModelRef(Strict):
    preset: Literal[
        "qwen3-4b", "qwen3-8b", "qwen3-30b-a3b", "qwen3-235b-a22b", "qwen2.5-7b", "qwen2.5-72b", "llama-3.1-8b",
    ] = Field(description="Model catalog entry: layers, heads, KV heads, experts, context (with sources).")
    path: RelPath = Field(description="Weights directory, relative to `global.storage.mountPath`.")


class Lengths(Strict):
    maxPrompt: int = Field(ge=1, description="Longest prompt in tokens (verl data.max_prompt_length).")
    maxResponse: int = Field(ge=1, description="Longest response in tokens (verl data.max_response_length).")


class Parallel(Strict):
    """Training-engine parallelism. Megatron sizes apply to the megatron backend; `ulysses` to FSDP."""

    tensor: int = Field(ge=1, description="Tensor parallel size (tp).")
    pipeline: int = Field(ge=1, description="Pipeline parallel size (pp).")
    context: int = Field(ge=1, description="Context parallel size (cp).")
    expert: int = Field(ge=1, description="Expert parallel size (ep).")
    expertTensor: int | None = Field(
        default=None, ge=1, description="Expert tensor parallel size (etp); null means = tp."
    )
    virtualPipeline: int | None = Field(
        default=None, ge=2, description="Virtual pipeline stages per rank (vpp); null = off."
    )
    sequenceParallel: bool = Field(description="Megatron sequence parallelism (needs tp > 1).")
    ulysses: int = Field(ge=1, description="FSDP Ulysses sequence parallel size (sp).")


class Rollout(Strict):
    samplesPerPrompt: int = Field(ge=1, description="Responses sampled per prompt (verl rollout.n, miles k).")
    tensorParallel: int = Field(
        ge=1, description="GPUs per inference engine (verl rollout tp; miles rollout_num_gpus_per_engine)."
    )
    gpuMemoryUtilization: float = Field(gt=0, le=1, description="Share of GPU memory the rollout engine may use.")
    maxModelLen: int | None = Field(default=None, ge=1, description="Rollout context; null = maxPrompt + maxResponse.")
    temperature: float = Field(ge=0, description="Sampling temperature.")


class Lora(Strict):
    rank: int = Field(ge=0, le=512, description="LoRA rank; 0 turns LoRA off.")
    alpha: int = Field(ge=1, description="LoRA alpha.")
    targetModules: str = Field(description="verl target_modules, e.g. `all-linear`.")


class Reward(Strict):
    kind: Literal["builtin", "service", "sandbox", "external"] = Field(
        description="builtin: the framework's rule-based scorer; service: this release's reward-service; "
        "sandbox: SandboxFusion code execution; external: a reward endpoint you run (`url`)."
    )
    url: str | None = Field(
        default=None, pattern=r"^https?://\S+$",
        description="kind external only: the scoring URL. In-cluster names must be in the release namespace.",
    )


class Trainer(Strict):
    project: str = Field(min_length=1, description="Experiment tracker project.")
    experiment: str = Field(min_length=1, description="Run name; also names the checkpoint directory.")
    totalEpochs: int = Field(ge=1, description="Epochs over the training data.")
    saveFreq: int = Field(description="Save a checkpoint every N steps; -1 = never.")
    testFreq: int = Field(description="Validate every N steps; -1 = never.")
    checkpointDir: RelPath = Field(description="Checkpoint root, relative to `global.storage.mountPath`.")
    logger: list[Literal["console", "tensorboard", "mlflow", "wandb"]] = Field(description="Where metrics go.")


class Data(Strict):
    trainFiles: list[RelPath] = Field(min_length=1, description="Parquet files relative to the storage mount.")
    valFiles: list[RelPath] = Field(min_length=1, description="Parquet files relative to the storage mount.")


class VerlBatch(Strict):
    """verl batch sizes, in prompts except where named per GPU. See docs/batch-math.md."""

    trainBatchSize: int = Field(ge=1, description="data.train_batch_size (B, prompts per step).")
    ppoMiniBatchSize: int = Field(ge=1, description="actor.ppo_mini_batch_size (M, prompts per update).")
    ppoMicroBatchSizePerGpu: int | None = Field(
        default=None, ge=1, description="actor.ppo_micro_batch_size_per_gpu (m)."
    )
    logProbMicroBatchSizePerGpu: int | None = Field(
        default=None, ge=1, description="rollout + ref log-prob micro batch (lp)."
    )
    useDynamicBsz: bool = Field(description="Token-budget micro batching instead of fixed micro batches.")
    ppoMaxTokenLenPerGpu: int | None = Field(default=None, ge=1, description="Token budget per GPU when useDynamicBsz.")


class Verl(Strict):
    batch: VerlBatch
    useV1Trainer: bool = Field(description="verl 0.9 trainer.use_v1 (pads batches instead of crashing).")


class Miles(Strict):
    """miles arguments. Actor world W = actorNodes x gpusPerNode."""

    rolloutBatchSize: int = Field(ge=1, description="--rollout-batch-size (R, prompts per rollout).")
    globalBatchSize: int = Field(ge=1, description="--global-batch-size (G, samples per optimizer step).")
    microBatchSize: int = Field(ge=1, description="--micro-batch-size (b).")
    numRollout: int = Field(ge=1, description="--num-rollout (training iterations).")
    colocate: bool = Field(description="Train and roll out on the same GPUs (--colocate).")
    actorNodes: int | None = Field(default=None,
        ge=1, description="Nodes for training when not colocated; the rest of the cluster rolls out. null if colocate."
    )
    useDynamicBatchSize: bool = Field(description="--use-dynamic-batch-size.")
    maxTokensPerGpu: int | None = Field(
        default=None, ge=1, description="--max-tokens-per-gpu (needed with dynamic batch size)."
    )
    extraArgs: list[str] = Field(
        default_factory=list,
        description="Raw miles/Megatron flags for what the values do not type, e.g. [\"--lr-warmup-iters\", \"10\"]; "
        "checked against the pinned build's flag catalogue; a flag the values set is refused.",
    )


class Job(Strict):
    framework: Literal["verl", "miles"] = Field(description="Training framework.")
    frameworkVersion: str = Field(description="verl: 0.8.0 | 0.9.1; miles: 0.1.0. Batch rules depend on it.")
    backend: Literal["megatron", "fsdp"] = Field(description="Training engine.")
    model: ModelRef
    data: Data
    lengths: Lengths
    parallel: Parallel
    rollout: Rollout
    lora: Lora
    reward: Reward
    trainer: Trainer
    verl: Verl | None = Field(default=None, description="Required when framework is verl; null otherwise.")
    miles: Miles | None = Field(default=None, description="Required when framework is miles; null otherwise.")

    @model_validator(mode="after")
    def _framework_section(self) -> Job:
        # Mirrored in JSON Schema by `job_conditionals()`; kept here so Python users get the same answer.
        own, other = (self.verl, self.miles) if self.framework == "verl" else (self.miles, self.verl)
        if own is None or other is not None:
            raise ValueError(f"framework {self.framework}: set job.{self.framework} and leave the other null")
        return self


def job_conditionals() -> list[dict]:
    """JSON Schema if/then clauses: framework picks its section and its allowed versions."""
    return [
        {
            "if": {"properties": {"framework": {"const": "verl"}}},
            "then": {
                "required": ["verl"],
                "properties": {
                    "miles": {"type": "null"},
                    "frameworkVersion": {"enum": list(VERL_VERSIONS)},
                }
            },
        },
        {
            "if": {"properties": {"framework": {"const": "miles"}}},
            "then": {
                "required": ["miles"],
                "properties": {
                    "verl": {"type": "null"},
                    "frameworkVersion": {"enum": list(MILES_VERSIONS)},
                    "backend": {"const": "megatron"},
                }
            },
        },
    ]
