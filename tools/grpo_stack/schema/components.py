"""Values of the umbrella chart (`global`) and of each subchart, as strict typed models."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field, StringConstraints, model_validator

from ..eval.tasks import TASK_IDS
from .common import AbsPath, Dns1123, Image, ProbeBudget, Quantity, RelPath, Resources, SecretRef, Strict
from .job import Job
from .monitoring import Monitoring
from .network import Network
from .pods import GlobalPod, LabelKey, LabelValue, Pod, Registry, Toleration

# EC2 name (`p5en.48xlarge`) or SageMaker HyperPod name (`ml.p5en.48xlarge`: what HyperPod nodes carry as their
# node.kubernetes.io/instance-type label).
InstanceType = Annotated[str, StringConstraints(pattern=r"^(ml\.)?[a-z0-9-]+\.[a-z0-9-]+$", max_length=64)]
# pip requirement pinned with == (the predecessor installed unpinned packages at pod start).
PinnedRequirement = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.\[\],-]+==[0-9][A-Za-z0-9.+!-]*$")]


class Cluster(Strict):
    gpuInstanceType: InstanceType = Field(
        description="EC2 type of the GPU worker nodes, e.g. `p5en.48xlarge`, or its HyperPod name `ml.p5en.48xlarge`."
    )
    nodes: int = Field(ge=1, le=4096, description="GPU nodes; the RayCluster gets one worker per node (at most "
                       "4096: 32k GPUs, beyond any one EKS cluster's GPU node groups).")
    gpusPerNode: int = Field(ge=1, le=8, description="GPUs per node; each worker requests all of them (no "
                             "catalogued instance type has more than 8).")
    efaPerNode: int = Field(ge=0, le=32, description="EFA interfaces per node; each worker requests all of them "
                            "(p5.48xlarge's 32 is the most of any catalogued type).")


# A Kubernetes quantity above zero (`7910m`, `29317Mi`): a node with no allocatable CPU or memory runs nothing.
PositiveQuantity = Annotated[str, StringConstraints(
    pattern=r"^([0-9]*[1-9][0-9]*(\.[0-9]+)?|[0-9]+\.[0-9]*[1-9][0-9]*)(m|Ki|Mi|Gi|Ti|k|M|G|T)?$")]


class InstanceCapacity(Strict):
    """One node of an instance type the catalogue lacks, as `kubectl describe node` reports its Allocatable."""

    cpu: PositiveQuantity = Field(description="Allocatable CPU, e.g. `7910m`.")
    memory: PositiveQuantity = Field(description="Allocatable memory, e.g. `29317Mi`.")
    gpus: int = Field(ge=0, le=64, description="`nvidia.com/gpu` per node.")
    efa: int = Field(ge=0, le=64, description="`vpc.amazonaws.com/efa` per node.")
    gpuMemory: PositiveQuantity | None = Field(
        default=None, description="Memory of one GPU as `nvidia-smi --query-gpu=memory.total` reports it, e.g. "
        "`97871Mi` for an H20. Read only by grpo-lint: its memory model (GRPO920) and GRPO905 judge a GPU type "
        "the catalogue lacks by it. Absent: such a type's memory is not modelled.")


class Storage(Strict):
    claimName: Dns1123 = Field(description="Existing FSx for Lustre PVC in the release namespace.")
    mountPath: AbsPath = Field(description="Where every pod mounts it.")
    capacity: Quantity | None = Field(
        default=None, description="Size of the filesystem (e.g. `4800Gi`, `lfs df -h`'s filesystem_summary size); "
        "grpo-lint GRPO614 checks the model, the retained checkpoints and the data fit. Null: checked against the "
        "smallest FSx for Lustre file system (1200 GiB), a warning when the run needs more.")
    used: Quantity | None = Field(
        default=None, description="What the filesystem already holds (`lfs df -h`'s filesystem_summary Used): "
        "GRPO614 subtracts it from capacity. Null: taken as empty.")


class TrackingSecret(Strict):
    """The experiment tracker's credential. The Secret's key is the variable the tracker reads, and the Ray pods
    get it under that name by secretKeyRef: `kubectl create secret generic wandb --from-literal=WANDB_API_KEY=...`."""

    name: Dns1123 = Field(description="Secret name in the release namespace.")
    key: Literal["WANDB_API_KEY", "MLFLOW_TRACKING_TOKEN"] = Field(
        description="Key inside the Secret and the variable set on the Ray pods: WANDB_API_KEY (logger wandb) or "
        "MLFLOW_TRACKING_TOKEN (logger mlflow).")


class Secrets(Strict):
    hfToken: SecretRef = Field(description="Hugging Face token Secret (`kubectl create secret generic hf-token`).")
    tracking: TrackingSecret | None = Field(
        default=None,
        description="Experiment-tracker credential Secret (reaches the Ray pods by secretKeyRef), or null.")


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


# The KubeRay releases grpo-lint knows the CRD fields of (GRPO352): v1.5.0 (the local control plane runs it),
# v1.6.0 (the first with upgradeStrategy), v1.7.0 (the one the chart targets).
KuberayVersion = Literal["1.5.0", "1.6.0", "1.7.0"]


class Run(Strict):
    """How the training run is driven: a long-lived RayCluster the recipe submits to, or a KubeRay RayJob that
    submits itself and frees the GPUs when it ends (docs/day-2.md, "Job mode")."""

    mode: Literal["cluster", "job"] = Field(
        description="`cluster`: a long-lived RayCluster; `recipes/grpo/run-on-cluster.sh` submits the job and the "
        "pods stay until the release is deleted. `job`: a RayJob (SidecarMode) whose entrypoint is the in-pod "
        "submit with `--follow`, so the RayJob ends with the training run's status and KubeRay deletes its "
        "cluster (shutdownAfterJobFinishes) `ttlSecondsAfterFinished` later. Job mode needs "
        "`raycluster.dashboard.exposed: true`: the operator reads the job's status from the dashboard through "
        "the head Service.")
    ttlSecondsAfterFinished: int = Field(
        ge=0, le=604800, description="Job mode: seconds between the RayJob's end and KubeRay deleting its "
        "RayCluster (the GPUs are held until then; time to read the head's logs).")
    operatorNamespace: Dns1123 = Field(
        description="Job mode: the namespace of the KubeRay operator, the one peer outside the release namespace "
        "the Ray dashboard port admits (the operator polls the job's status there).")
    queue: Dns1123 | Literal[""] = Field(
        description="A Kueue LocalQueue in the release namespace: the RayJob (job mode) or RayCluster (cluster "
        "mode) carries `kueue.x-k8s.io/queue-name` and is admitted whole by Kueue; a RayJob is created "
        "suspended. Empty: no queueing.")
    kuberayVersion: KuberayVersion = Field(
        description="The KubeRay operator release the cluster runs. Read by grpo-lint alone (GRPO352 warns of a "
        "rendered field that release's CRD lacks, which the API server drops and the operator never sees).")


class Global(Strict):
    cluster: Cluster
    storage: Storage
    secrets: Secrets
    components: Components
    job: Job
    run: Run = Field(description="How the run is driven: RayCluster or RayJob, and its Kueue queue.")
    eval: Eval
    pod: GlobalPod = Field(description="Scheduling, labels and annotations of every pod of the release.")
    imageRegistry: Registry = Field(
        description="Registry every image is pulled from, replacing the registry its repository names "
        "(`vllm/vllm-openai` -> `<registry>/vllm/vllm-openai`, `public.ecr.aws/x/y` -> `<registry>/x/y`): a "
        "mirror or an ECR pull-through cache. Empty: each repository as written.")
    imagePullSecrets: list[Dns1123] = Field(
        max_length=16, description="Secrets (type kubernetes.io/dockerconfigjson) in the release namespace, "
        "listed in every pod's imagePullSecrets.")
    instanceTypes: dict[InstanceType, InstanceCapacity] = Field(
        max_length=64, json_schema_extra={"additionalProperties": False},
        description="Capacity of real instance types the catalogue lacks, by name: "
        "`{c7i.2xlarge: {cpu: 7910m, memory: 29317Mi, gpus: 0, efa: 0}}`, a GPU type with `gpuMemory` too. Read by "
        "grpo-lint alone (GRPO601, GRPO613; GRPO920 and GRPO905 with gpuMemory), like `.grpo-lint.yaml` "
        "`instance-types`, whose entry for the same type it overrides; the chart ignores it. Empty: only "
        "catalogued types pass the lint.")
    monitoring: Monitoring | None = Field(
        default=None, description="Prometheus Operator monitors, alert rules and Grafana dashboards "
        "(docs/observability.md; values/monitoring/monitoring.yaml turns them on); absent: none rendered.")
    network: Network | None = Field(
        default=None, description="Egress to peers outside the release (docs/security.md, Declared flows); "
        "absent: only the chart's own flows.")


class Head(Strict):
    instanceType: InstanceType = Field(description="CPU node type for the Ray head (no GPU, no CUDA needed).")
    resources: Resources
    pod: Pod


class Worker(Strict):
    scaleToZero: bool = Field(default=False, description=(
        "No GPU worker pods while true: the GPUs are freed between runs without uninstalling (the head, the "
        "reward service and the sandbox stay; the run's shape is still global.cluster.nodes, and the submit "
        "refuses to start until this is false again). docs/day-2.md, Freeing the GPUs."))
    resources: Resources = Field(description="CPU and memory per GPU worker (GPUs and EFA come from global.cluster).")
    shmSize: Quantity = Field(description="Size of the /dev/shm memory volume (NCCL, dataloaders).")
    pod: Pod


class Nccl(Strict):
    debug: Literal["VERSION", "WARN", "INFO", "TRACE"] = Field(description="NCCL_DEBUG on every Ray container.")
    socketIfname: Annotated[str, StringConstraints(pattern=r"^[\^=]?[A-Za-z0-9_.:@-]+(,[A-Za-z0-9_.:@-]+)*$",
                                                   max_length=256)] = Field(
        description="NCCL_SOCKET_IFNAME on every Ray container: the interfaces NCCL's bootstrap and socket traffic "
        "use, NCCL's syntax (`^` excludes prefixes, `=` names exact interfaces). The default excludes docker, "
        "loopback and veth rather than naming one, which holds on EFA nodes; name yours (`eth0`, `ens5`) where "
        "the pod interface differs."
    )
    netGdrLevel: Literal["LOC", "PIX", "PXB", "PHB", "SYS"] = Field(
        description="NCCL_NET_GDR_LEVEL on every Ray container: how far apart NIC and GPU may be for GPUDirect RDMA "
        "(PHB: through the CPU's PCIe host bridge)."
    )


class Libfabric(Strict):
    provider: Annotated[str, StringConstraints(pattern=r"^\^?[A-Za-z0-9_;]+(,[A-Za-z0-9_;]+)*$", max_length=128)] = (
        Field(description="FI_PROVIDER on every Ray container: the libfabric provider NCCL's OFI plugin uses "
              "(`efa` on EFA nodes)."))
    efaUseDeviceRdma: bool = Field(
        description="FI_EFA_USE_DEVICE_RDMA on every Ray container (1/0): GPUDirect RDMA over EFA (p4d, p5 and "
        "later; false on instance types whose EFA has no RDMA read)."
    )


class Dashboard(Strict):
    exposed: bool = Field(
        description="false: Ray dashboard/job API on 127.0.0.1 (kubectl port-forward, in-pod submit). "
        "true: on 0.0.0.0, reachable from pods of the release namespace (NetworkPolicy)."
    )


class RayImage(Image):
    """The Ray image; `build` names its framework build when the tag does not (grpo-lint GRPO330)."""

    build: Annotated[str, StringConstraints(pattern=r"^([A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?$")] = Field(
        description="The framework build this image is, as images/README.md tags it (`0.9.1-ray2.53.0-r2`, "
        "`dec268f7-ray2.56.1-r1`; the image's `io.grpo-stack.build` label): for an image pushed under your own tag "
        "or pinned by digest alone. Empty: the tag is the build. `grpo-images` writes it."
    )


JOB_MODE_DASHBOARD_REASON = (
    "exposed: job mode (global.run.mode job) needs the dashboard on 0.0.0.0, since the KubeRay operator reads "
    "the RayJob's status from the dashboard's job API through the head Service; on 127.0.0.1 the RayJob never learns "
    "the run's end (KubeRay v1.5.0 rayjob_controller.go GetJobInfo); set raycluster.dashboard.exposed: true")
# Helm injects `global` into the subchart's values, so the subchart schema can tie the two together.
_JOB_MODE_EXPOSES_DASHBOARD = {
    "if": {"properties": {"global": {"properties": {"run": {"properties": {"mode": {"const": "job"}},
                                                            "required": ["mode"]}},
                                     "required": ["run"]}},
           "required": ["global"]},
    "then": {"properties": {"dashboard": {"properties": {"exposed": {
        "const": True, "x-grpo-reason": JOB_MODE_DASHBOARD_REASON}}}}},
}


class Raycluster(Strict):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"allOf": [_JOB_MODE_EXPOSES_DASHBOARD]})

    rayVersion: Annotated[str, StringConstraints(pattern=r"^\d+\.\d+\.\d+$")] = Field(
        description="Ray version inside the image (RayCluster spec.rayVersion)."
    )
    image: RayImage
    head: Head
    worker: Worker
    nccl: Nccl
    libfabric: Libfabric
    dashboard: Dashboard


class DedicatedNodes(Strict):
    nodeSelector: dict[LabelKey, LabelValue] = Field(
        description="Labels of a node group that runs only the sandbox (added to the instance-type selector)."
    )
    tolerations: list[Toleration] = Field(description="Tolerations for that node group's taint.")


# privileged: true is allowed only with a dedicated node group (a privileged escape owns the node it runs on).
_PRIVILEGED_NEEDS_DEDICATED_NODES = {
    "if": {"properties": {"privileged": {"const": True}}, "required": ["privileged"]},
    "then": {
        "required": ["dedicatedNodes"],
        "properties": {"dedicatedNodes": {
            "required": ["nodeSelector", "tolerations"],
            "properties": {"nodeSelector": {"minProperties": 1}, "tolerations": {"minItems": 1}},
        }},
    },
}


class SandboxFusion(Strict):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"allOf": [_PRIVILEGED_NEEDS_DEDICATED_NODES]})

    image: Image
    replicas: int = Field(ge=1, description="Sandbox pods behind the Service.")
    instanceType: InstanceType = Field(description="CPU node type the sandbox runs on.")
    resources: Resources
    pod: Pod
    privileged: bool = Field(
        description="Run privileged (SandboxFusion's lite isolation: overlayfs, cgroups, netns). Off by default; "
        "needs dedicatedNodes. See docs/security.md."
    )
    dedicatedNodes: DedicatedNodes = Field(
        description="Node group for the sandbox alone: nodeSelector and tolerations, both required when privileged."
    )
    readOnlyRootFilesystem: bool = Field(
        description="Read-only root filesystem; /tmp and /root/.cache are emptyDirs. false only for a runtime "
        "that must write inside the image."
    )
    scratchSize: Quantity = Field(description="sizeLimit of each scratch emptyDir (/tmp, /root/.cache).")
    antiAffinity: Literal["required", "preferred"] = Field(
        description="Keep sandbox pods off the Ray head's node: required (default) or preferred."
    )

    @model_validator(mode="after")
    def _privileged_on_dedicated_nodes(self) -> SandboxFusion:
        # Mirrored in JSON Schema by _PRIVILEGED_NEEDS_DEDICATED_NODES.
        if self.privileged and not (self.dedicatedNodes.nodeSelector and self.dedicatedNodes.tolerations):
            raise ValueError("privileged: true needs dedicatedNodes.nodeSelector and dedicatedNodes.tolerations "
                             "(a node group that runs only the sandbox)")
        return self


# A dataset's `data_source` value, matched exactly (no prefix or suffix matching).
DataSource = Annotated[str, StringConstraints(min_length=1, max_length=256, pattern=r"^\S(.*\S)?$")]
# The scorers images/reward-service offers: math (math-verify), code (SandboxFusion /run_code) and the named custom
# scorers registered in reward_service/custom.py. tests/reward checks this list against the image's registry.
RewardScorer = Literal["math", "code", "exact_match", "chrf"]


class RewardSandbox(Strict):
    """How the reward service calls SandboxFusion's /run_code for `code` routes (global.components.sandboxFusion)."""

    concurrency: int = Field(ge=1, le=1024, description="Concurrent /run_code calls per reward pod; the sandbox "
                             "enforces no limit of its own, so keep replicas x this at most 2x the sandbox pods' "
                             "CPUs (GRPO521).")
    retries: int = Field(ge=0, le=10, description="Retries of a failed call (5xx, refused, timeout, SandboxError) "
                         "before the sample is answered 502 sandbox_unavailable.")
    runTimeoutSeconds: float = Field(ge=1, le=300, description="run_timeout and compile_timeout per test case.")
    memoryMb: int = Field(ge=64, le=65536, description="Memory one test case may use, for GRPO521's sandbox pod "
                          "budget; not sent: the pinned server has no per-run memory_limit_MB (docs/wires.md).")
    maxTests: int = Field(ge=1, le=1000, description="Test cases run per sample (the first N; reward = share passed).")


class RewardService(Strict):
    image: Image
    replicas: int = Field(ge=1, description="Reward pods behind the Service.")
    instanceType: InstanceType = Field(description="CPU node type.")
    resources: Resources
    pod: Pod
    backend: Literal["math_verify"] = Field(description="REWARD_BACKEND (allow-list).")
    workers: int = Field(ge=1, le=256, description="Scoring worker processes per pod: one per CPU of "
                         "`resources.cpu`, less one for the HTTP process; memory at least workers x 2 GiB + "
                         "0.5 GiB (GRPO520).")
    hardTimeoutSeconds: float = Field(gt=1, le=30, description="Per-sample kill deadline; above math-verify's 1 s "
                                      "parse timeout, or the service refuses to start.")
    routes: dict[DataSource, RewardScorer] = Field(
        min_length=1,
        description="data_source -> scorer, matched exactly; a sample whose data_source is not listed is refused "
        "(HTTP 400 unknown_source), never scored by a default. `code` needs global.components.sandboxFusion.",
    )
    sandbox: RewardSandbox


HfRepo = Annotated[str, StringConstraints(pattern=r"^([A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*)?$")]
Commit = Annotated[str, StringConstraints(pattern=r"^([0-9a-f]{40})?$")]
# grpo-data's --dataset NAME[:WEIGHT or ROWS]; the names are those of its adapter registry.
DatasetSpec = Annotated[str, StringConstraints(
    pattern=r"^(gsm8k|math|dapo-math-17k|aime|apps|taco|codecontests)(:[0-9]+(\.[0-9]+)?)?$")]
DatasetName = Literal["gsm8k", "math", "dapo-math-17k", "aime", "apps", "taco", "codecontests"]


class StageModel(Strict):
    """What `grpo-models stage` fetches into `global.job.model.path` (NOTES prints the command)."""

    repo: HfRepo = Field(description="Hugging Face repository, e.g. `Qwen/Qwen3-8B`; empty: NOTES shows a "
                         "placeholder.")
    revision: Commit = Field(description="The 40-hex commit to stage; empty: NOTES shows a placeholder.")


class StageData(Strict):
    """What `grpo-data` prepares into `global.job.data.trainFiles[0]` and `valFiles[0]`."""

    train: list[DatasetSpec] = Field(min_length=1, description="`grpo-data prepare --dataset` values "
                                     "(`NAME[:WEIGHT]`).")
    val: list[DatasetSpec] = Field(min_length=1, description="`grpo-data holdout --dataset` values "
                                   "(`NAME[:ROWS]`).")
    revisions: dict[DatasetName, Commit] = Field(
        description="Per-source commit overrides (`grpo-data --revision NAME=COMMIT`); every source already "
        "has a pinned commit, listed by `grpo-data datasets`."
    )
    seed: int = Field(ge=0, description="Mixing and sampling seed.")


class FsxUtils(Strict):
    """Utility pod with the FSx volume. Its image (images/fsx-utils) carries this release's grpo-data and
    grpo-models; the pod is Ready only when the installed tools report this chart's appVersion."""

    image: Image
    instanceType: InstanceType = Field(description="CPU node type.")
    resources: Resources
    pod: Pod
    model: StageModel
    data: StageData


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
    pod: Pod
    startupProbe: ProbeBudget


class LmEval(Strict):
    """lm-evaluation-harness driver. Its image (images/lm-eval) carries every package and the benchmark datasets:
    the pod runs model-written code, so it reaches only vLLM and DNS and installs nothing at start. Generation
    budget and context come from `global.job.lengths` (maxResponse; maxPrompt + maxResponse), never typed here."""

    image: Image
    instanceType: InstanceType = Field(description="CPU node type for the driver.")
    resources: Resources
    pod: Pod
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
