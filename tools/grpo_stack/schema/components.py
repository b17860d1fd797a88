"""Values of the umbrella chart (`global`) and of each subchart, as strict typed models."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from ..eval.tasks import TASK_IDS
from .common import AbsPath, Dns1123, Image, ProbeBudget, Quantity, RelPath, Resources, SecretRef, Strict
from .job import Job

InstanceType = Annotated[str, StringConstraints(pattern=r"^[a-z0-9-]+\.[a-z0-9-]+$")]
# pip requirement pinned with == (the predecessor installed unpinned packages at pod start).
PinnedRequirement = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.\[\],-]+==[0-9][A-Za-z0-9.+!-]*$")]


class Cluster(Strict):
    gpuInstanceType: InstanceType = Field(description="EC2 type of the GPU worker nodes, e.g. `p5en.48xlarge`.")
    nodes: int = Field(ge=1, description="GPU nodes; the RayCluster gets one worker per node.")
    gpusPerNode: int = Field(ge=1, description="GPUs per node; each worker requests all of them.")
    efaPerNode: int = Field(ge=0, description="EFA interfaces per node; each worker requests all of them.")


class Storage(Strict):
    claimName: Dns1123 = Field(description="Existing FSx for Lustre PVC in the release namespace.")
    mountPath: AbsPath = Field(description="Where every pod mounts it.")


class Secrets(Strict):
    hfToken: SecretRef = Field(description="Hugging Face token Secret (`kubectl create secret generic hf-token`).")
    tracking: SecretRef | None = Field(default=None, description="Experiment-tracker credential Secret, or null.")


class Components(Strict):
    """Which subcharts are installed. The single switch each subchart's condition reads."""

    raycluster: bool = Field(
        description="The training RayCluster and its job ConfigMap. false in an evaluation release "
        "(values/eval/eval.yaml), which must never touch the training pods."
    )
    sandboxFusion: bool = Field(description="SandboxFusion code-execution service.")
    rewardService: bool = Field(description="CPU reward service.")
    fsxUtils: bool = Field(description="FSx utility pod for staging models and data.")
    vllm: bool = Field(description="vLLM evaluation server.")
    lmEval: bool = Field(description="lm-evaluation-harness Job against the vLLM server.")


class Eval(Strict):
    """What an evaluation release evaluates; read by both the vLLM server and the lm-eval Job."""

    checkpointStep: int | None = Field(
        default=None, ge=0, description="Serve the merged model of this training step, "
        "`<global.job.trainer.checkpointDir>/global_step_<N>/merged` (written by `grpo-eval merge`, refused unless "
        "its provenance names this run); null serves the base model `global.job.model.path`."
    )


class Global(Strict):
    cluster: Cluster
    storage: Storage
    secrets: Secrets
    components: Components
    job: Job
    eval: Eval


class Head(Strict):
    instanceType: InstanceType = Field(description="CPU node type for the Ray head (no GPU, no CUDA needed).")
    resources: Resources


class Worker(Strict):
    resources: Resources = Field(description="CPU and memory per GPU worker (GPUs and EFA come from global.cluster).")
    shmSize: Quantity = Field(description="Size of the /dev/shm memory volume (NCCL, dataloaders).")


class Nccl(Strict):
    debug: Literal["VERSION", "WARN", "INFO", "TRACE"] = Field(description="NCCL_DEBUG on every Ray container.")


class Raycluster(Strict):
    rayVersion: Annotated[str, StringConstraints(pattern=r"^\d+\.\d+\.\d+$")] = Field(
        description="Ray version inside the image (RayCluster spec.rayVersion)."
    )
    image: Image
    head: Head
    worker: Worker
    nccl: Nccl


class SandboxFusion(Strict):
    image: Image
    replicas: int = Field(ge=1, description="Sandbox pods behind the Service.")
    instanceType: InstanceType = Field(description="CPU node type the sandbox runs on.")
    resources: Resources
    privileged: bool = Field(
        description="Run privileged. Off by default; SandboxFusion's cgroup isolation wants it. See docs/security.md."
    )
    antiAffinity: Literal["required", "preferred"] = Field(
        description="Keep sandbox pods off the Ray head's node: required (default) or preferred."
    )


class RewardService(Strict):
    image: Image
    replicas: int = Field(ge=1, description="Reward pods behind the Service.")
    instanceType: InstanceType = Field(description="CPU node type.")
    resources: Resources
    backend: Literal["math_verify"] = Field(description="REWARD_BACKEND (allow-list).")
    workers: int = Field(ge=1, description="Scoring worker processes per pod (one per CPU).")
    hardTimeoutSeconds: float = Field(gt=0, le=30, description="Per-sample kill deadline.")


class FsxUtils(Strict):
    image: Image
    instanceType: InstanceType = Field(description="CPU node type.")
    resources: Resources
    pipPackages: list[PinnedRequirement] = Field(description="Installed at start, each pinned with ==.")


class Vllm(Strict):
    """The evaluation server. It serves `global.eval.checkpointStep`'s model from a read-only mount of exactly
    that directory; its startup budget is also how long lm-eval waits for it."""

    image: Image
    instanceType: InstanceType = Field(description="GPU node type for the server.")
    tensorParallel: int = Field(ge=1, description="GPUs for the server (--tensor-parallel-size).")
    maxModelLen: int = Field(ge=1, description="--max-model-len; at least the training budget maxPrompt + maxResponse.")
    gpuMemoryUtilization: float = Field(gt=0, le=1, description="--gpu-memory-utilization.")
    executeModelTimeoutSeconds: int = Field(
        ge=1, description="VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS (a large adapter load exceeds the 300 s default)."
    )
    enforceEager: bool = Field(description="--enforce-eager (no CUDA graphs).")
    trustRemoteCode: bool = Field(description="--trust-remote-code: runs model code from the staged weights.")
    resources: Resources
    startupProbe: ProbeBudget


class LmEval(Strict):
    """lm-evaluation-harness driver. Its image (images/lm-eval) carries every package and the benchmark datasets:
    the pod runs model-written code, so it reaches only vLLM and DNS and installs nothing at start. Generation
    budget and context come from `global.job.lengths` (maxResponse; maxPrompt + maxResponse), never typed here."""

    image: Image
    instanceType: InstanceType = Field(description="CPU node type for the driver.")
    resources: Resources
    tasks: list[Literal[TASK_IDS]] = Field(  # type: ignore[valid-type]
        min_length=1, description="Task ids, matched exactly; *_pK: K samples per problem, pass@1 and pass@K "
        "(definitions in the lm-eval chart's tasks/)."
    )
    numConcurrent: int = Field(ge=1, description="Concurrent requests to vLLM.")
    outputSubPath: RelPath = Field(
        description="Results root on the storage volume (owned by UID 10001). Each run writes only its own "
        "`<root>/<experiment>/<step-N|base>/<spec hash>/` directory."
    )
    allowPublicHttps: bool = Field(
        description="Let the pod reach public HTTPS (tasks whose data is not in the image). Off: DNS and vLLM only, "
        "and the Hugging Face libraries run offline."
    )


# Subchart directory name -> model. Order is the order of docs and schema generation.
SUBCHARTS: dict[str, type[Strict]] = {
    "raycluster": Raycluster,
    "sandbox-fusion": SandboxFusion,
    "reward-service": RewardService,
    "fsx-utils": FsxUtils,
    "vllm": Vllm,
    "lm-eval": LmEval,
}
