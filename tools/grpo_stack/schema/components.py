"""Values of the umbrella chart (`global`) and of each subchart, as strict typed models."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

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

    sandboxFusion: bool = Field(description="SandboxFusion code-execution service.")
    rewardService: bool = Field(description="CPU reward service.")
    fsxUtils: bool = Field(description="FSx utility pod for staging models and data.")
    vllm: bool = Field(description="vLLM evaluation server.")
    lmEval: bool = Field(description="lm-evaluation-harness Job against the vLLM server.")


class Global(Strict):
    cluster: Cluster
    storage: Storage
    secrets: Secrets
    components: Components
    job: Job


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


# A dataset's `data_source` value, matched exactly (no prefix or suffix matching).
DataSource = Annotated[str, StringConstraints(min_length=1, max_length=256, pattern=r"^\S(.*\S)?$")]
# The scorers images/reward-service offers: math (math-verify), code (SandboxFusion /run_code) and the named custom
# scorers registered in reward_service/custom.py. tests/reward checks this list against the image's registry.
RewardScorer = Literal["math", "code", "exact_match"]


class RewardSandbox(Strict):
    """How the reward service calls SandboxFusion's /run_code for `code` routes (global.components.sandboxFusion)."""

    concurrency: int = Field(ge=1, le=1024, description="Concurrent /run_code calls per reward pod; the sandbox "
                             "enforces no limit of its own, so keep it near 2x the sandbox's cores.")
    retries: int = Field(ge=0, le=10, description="Retries of a failed call (5xx, refused, timeout, SandboxError) "
                         "before the sample is answered 502 sandbox_unavailable.")
    runTimeoutSeconds: float = Field(ge=1, le=300, description="run_timeout and compile_timeout per test case.")
    memoryMb: int = Field(ge=64, le=65536, description="memory_limit_MB per test case (the server's default is none).")
    maxTests: int = Field(ge=1, le=1000, description="Test cases run per sample (the first N; reward = share passed).")


class RewardService(Strict):
    image: Image
    replicas: int = Field(ge=1, description="Reward pods behind the Service.")
    instanceType: InstanceType = Field(description="CPU node type.")
    resources: Resources
    backend: Literal["math_verify"] = Field(description="REWARD_BACKEND (allow-list).")
    workers: int = Field(ge=1, le=256, description="Scoring worker processes per pod (one per CPU).")
    hardTimeoutSeconds: float = Field(gt=0, le=30, description="Per-sample kill deadline.")
    routes: dict[DataSource, RewardScorer] = Field(
        min_length=1,
        description="data_source -> scorer, matched exactly; a sample whose data_source is not listed is refused "
        "(HTTP 400 unknown_source), never scored by a default. `code` needs global.components.sandboxFusion.",
    )
    sandbox: RewardSandbox


class FsxUtils(Strict):
    image: Image
    instanceType: InstanceType = Field(description="CPU node type.")
    resources: Resources
    pipPackages: list[PinnedRequirement] = Field(description="Installed at start, each pinned with ==.")


class Vllm(Strict):
    image: Image
    instanceType: InstanceType = Field(description="GPU node type for the server.")
    tensorParallel: int = Field(ge=1, description="GPUs for the server (--tensor-parallel-size).")
    modelPath: RelPath = Field(description="Model to serve, relative to the storage mount.")
    maxModelLen: int = Field(ge=1, description="--max-model-len.")
    gpuMemoryUtilization: float = Field(gt=0, le=1, description="--gpu-memory-utilization.")
    executeModelTimeoutSeconds: int = Field(
        ge=1, description="VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS (a large adapter load exceeds the 300 s default)."
    )
    enforceEager: bool = Field(description="--enforce-eager (no CUDA graphs).")
    trustRemoteCode: bool = Field(description="--trust-remote-code: runs model code from the staged weights.")
    resources: Resources
    startupProbe: ProbeBudget


class LmEval(Strict):
    """lm-evaluation-harness driver. Its image (images/lm-eval) carries every package: the pod runs
    model-written code, so it gets no egress beyond vLLM and DNS and installs nothing at start."""

    image: Image
    instanceType: InstanceType = Field(description="CPU node type for the driver.")
    resources: Resources
    tasks: list[Literal["gsm8k", "humaneval", "humaneval_p4", "mbpp", "mbpp_p4"]] = Field(
        min_length=1, description="Tasks; *_pK are the pass@K definitions shipped in the tasks ConfigMap."
    )
    maxLength: int = Field(ge=1, description="lm-eval max_length (prompt + generation).")
    numConcurrent: int = Field(ge=1, description="Concurrent requests to vLLM.")
    outputSubPath: RelPath = Field(description="The only writable path on the storage volume, for results.")
    readyTimeoutSeconds: int = Field(ge=1, description="How long to wait for vLLM before failing the Job.")


# Subchart directory name -> model. Order is the order of docs and schema generation.
SUBCHARTS: dict[str, type[Strict]] = {
    "raycluster": Raycluster,
    "sandbox-fusion": SandboxFusion,
    "reward-service": RewardService,
    "fsx-utils": FsxUtils,
    "vllm": Vllm,
    "lm-eval": LmEval,
}
