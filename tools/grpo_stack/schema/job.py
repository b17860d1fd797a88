"""`global.job`: the training run, framework-neutral where the concept is shared.

The model is discriminated by framework and backend (`JOB_VARIANTS`) and by LoRA on/off (`lora: null` is off):
a key that does not apply to the chosen variant is rejected with a one-line reason (`NOT_HERE`) and is never
required. The job builder (grpo_stack.job) turns the values into verl overrides or miles arguments; the chart
only serialises them into the job ConfigMap.

Optional run knobs (optim, kl, ...) left out keep the framework's own default: the builder emits nothing for
them, so the framework's config decides (each description names the verl key and its 0.9.1 default).
Every number has a maximum: a bound far above any real run that turns a typo (or 2**70) into a schema error.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import ConfigDict, Discriminator, Field, StringConstraints, Tag

from ..deadline.plan import RFC3339
from ..rayports import POD_PORTS
from .common import EnvName, RelPath, SecretRef, Strict

# Bounds shared by several fields, each with why it is big enough.
MAX_TOKENS = 1_048_576  # 1M tokens: above every open model's context window (Llama 4 Scout: 10M is rope-scaled)
MAX_PROMPTS = 65_536  # prompts per step: 64x the largest batch in verl's / miles' examples (1024)
MAX_PER_GPU = 4_096  # sequences per GPU per micro batch: no 8-GPU node holds more of even 1-token samples
MAX_TOKEN_BUDGET = 4_194_304  # tokens per GPU per micro batch: 4x MAX_TOKENS
MAX_STEPS = 1_000_000  # steps, epochs, frequencies: a million RL steps is years of GPU time
MAX_PARALLEL = 512  # any parallel degree: the largest catalogued cluster is far below 512 GPUs per model copy


def _reason(key: str, why: str) -> str:
    return f"{key}: {why}"


def only_when(key: str, sibling: str, allowed: list, reason: str) -> dict:
    """JSON Schema clause: `key` is refused (with `reason`) unless `sibling` is one of `allowed`."""
    return {"if": {"properties": {sibling: {"not": {"enum": allowed}}}},
            "then": {"properties": {key: {"type": "null", "x-grpo-reason": _reason(key, reason)}}}}


def required_when(key: str, sibling: str, value: object) -> dict:
    return {"if": {"properties": {sibling: {"const": value}}, "required": [sibling]}, "then": {"required": [key]}}


def conditional(*clauses: dict) -> ConfigDict:
    """A strict model whose keys depend on a sibling's value (a key that reaches nothing is refused)."""
    return ConfigDict(extra="forbid", populate_by_name=True, json_schema_extra={"allOf": list(clauses)})


class Variant(Strict):
    """A model whose keys depend on a discriminator. NOT_HERE: key -> one-line reason it does not apply here."""

    NOT_HERE: ClassVar[dict[str, str]] = {}


Preset = Literal[
    "qwen3-4b", "qwen3-8b", "qwen3-30b-a3b", "qwen3-235b-a22b", "qwen2.5-7b", "qwen2.5-72b", "llama-3.1-8b",
]


class ModelShapeValues(Strict):
    """The architecture of a model outside the presets: what its Hugging Face config.json says
    (`grpo-lint --model-config config.json` fills this in)."""

    layers: int = Field(ge=1, le=1024, description="num_hidden_layers.")
    hidden: int = Field(ge=64, le=65_536, description="hidden_size.")
    intermediate: int = Field(ge=64, le=262_144, description="intermediate_size of one MLP (per expert for MoE: "
                              "moe_intermediate_size).")
    heads: int = Field(ge=1, le=1024, description="num_attention_heads.")
    kvHeads: int = Field(ge=1, le=1024, description="num_key_value_heads (= heads without GQA).")
    headDim: int | None = Field(default=None, ge=8, le=1024, description="head_dim when the config states it "
                                "(Qwen3: 128, not hidden / heads); absent: hidden / heads.")
    experts: int = Field(ge=0, le=4096, description="Routed experts (num_experts); 0 for a dense model.")
    expertsPerToken: int | None = Field(
        default=None, ge=1, le=4096, description="The experts each token is routed to (num_experts_per_tok) of a "
        "MoE model: grpo-lint's memory model counts their activations. Absent for a MoE shape: every expert's, an "
        "upper bound, so a GRPO920 verdict that rests on it is a warning naming it.")
    vocab: int = Field(ge=1, le=2_097_152, description="vocab_size.")
    maxPositions: int = Field(ge=1, le=MAX_TOKENS * 16, description="max_position_embeddings.")


def _one_model_source(schema: dict) -> None:
    schema["oneOf"] = [{"required": ["preset"], "properties": {"shape": {"type": "null"}}},
                       {"required": ["shape"], "properties": {"preset": {"type": "null"}}}]


class ModelRef(Strict):
    """The model: a catalogued preset, or its shape for any other model (exactly one of the two)."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=lambda schema: _one_model_source(schema))
    preset: Preset | None = Field(default=None, description="Model catalog entry: layers, heads, KV heads, "
                                  "experts, context (with sources). Or give `shape`.")
    shape: ModelShapeValues | None = Field(default=None, description="Any other model's architecture, instead "
                                           "of a preset.")
    path: RelPath = Field(description="Weights directory, relative to `global.storage.mountPath`.")


class MilesModelRef(Variant):
    NOT_HERE: ClassVar[dict[str, str]] = {
        "shape": "not used under framework miles: miles needs its per-model argument script "
                 "(scripts/models/<name>.sh), so only presets are supported"}
    preset: Preset = Field(description="Model catalog entry (miles sources its scripts/models/<name>.sh).")
    path: RelPath = Field(description="Weights directory, relative to `global.storage.mountPath`.")


class ResponsePercentile(Strict):
    """A statement about the long end of the responses: `percentile` % of them are at most `tokens` long."""

    percentile: float = Field(gt=0, lt=100, description="The share of responses, in per cent, that are at most "
                              "`tokens` long (95: the 95th percentile).")
    tokens: int = Field(ge=1, le=MAX_TOKENS, description="Response length in tokens at that percentile.")


class Lengths(Strict):
    maxPrompt: int = Field(ge=1, le=MAX_TOKENS, description="Longest prompt in tokens (verl data.max_prompt_length; "
                           "miles --rollout-max-prompt-len).")
    maxResponse: int = Field(ge=1, le=MAX_TOKENS, description="Longest response in tokens (verl "
                             "data.max_response_length; miles --rollout-max-response-len).")
    meanPrompt: int | None = Field(
        default=None, ge=1, le=MAX_TOKENS, description="Expected mean prompt length in tokens, a statistic of the "
        "data under the model's chat template (GSM8K under Qwen2.5's: 105). Read only by grpo-lint's memory model "
        "(GRPO920): verl and miles pack a micro batch's samples, so its activations follow the real lengths. "
        "Absent: every prompt at maxPrompt (conservative); above maxPrompt counts as maxPrompt.")
    meanResponse: int | None = Field(
        default=None, ge=1, le=MAX_TOKENS, description="Expected mean response length in tokens, e.g. a previous "
        "run's response_length/mean. Read only by grpo-lint's memory model (GRPO920), as meanPrompt. Absent: every "
        "response at maxResponse (conservative); above maxResponse counts as maxResponse.")
    responsePercentile: ResponsePercentile | None = Field(
        default=None, description="How long the long responses are, from a previous run's generations: read only "
        "by grpo-lint's memory model (GRPO920), for packed micro batches of a static size. The model then holds "
        "the responses above the percentile at maxResponse and the others at `tokens` (at least the stated "
        "means), instead of one sample at its longest and the others at the means. Absent: that rule.")


MEGATRON_ONLY = ("not used under backend fsdp: a Megatron parallel size (FSDP shards parameters over every GPU; "
                 "parallel.ulysses splits sequences); delete it")


class FsdpParallel(Variant):
    """backend fsdp: FSDP shards parameters over all GPUs; only Ulysses sequence parallelism is a choice."""

    NOT_HERE: ClassVar[dict[str, str]] = {
        k: MEGATRON_ONLY
        for k in ("tensor", "pipeline", "context", "expert", "expertTensor", "virtualPipeline", "sequenceParallel")
    }
    ulysses: int = Field(ge=1, le=64, description="Ulysses sequence parallel size (verl "
                         "actor.ulysses_sequence_parallel_size); at most the 64 attention heads of the largest model.")


class MegatronParallel(Variant):
    """backend megatron: Megatron-core model parallelism (dp = world / (tp x pp x cp))."""

    NOT_HERE: ClassVar[dict[str, str]] = {"ulysses": "not used under backend megatron: FSDP's Ulysses size "
                                          "(use parallel.context to split sequences over GPUs); delete it"}
    tensor: int = Field(ge=1, le=64, description="Tensor parallel size (tp); at most 64 attention heads.")
    pipeline: int = Field(ge=1, le=128, description="Pipeline parallel size (pp); at most the layers of a model.")
    context: int = Field(ge=1, le=64, description="Context parallel size (cp).")
    expert: int = Field(ge=1, le=MAX_PARALLEL, description="Expert parallel size (ep); at most the routed experts.")
    expertTensor: int | None = Field(
        default=None, ge=1, le=64, description="Expert tensor parallel size (etp); null or absent means = tp."
    )
    virtualPipeline: int | None = Field(
        default=None, ge=2, le=128, description="Virtual pipeline stages per rank (vpp); null or absent = off."
    )
    sequenceParallel: bool = Field(description="Megatron sequence parallelism (needs tp > 1).")


class Rollout(Variant):
    samplesPerPrompt: int = Field(ge=1, le=1024, description="Responses sampled per prompt (verl rollout.n, "
                                  "miles --n-samples-per-prompt); GRPO groups beyond 1024 are not a real run.")
    tensorParallel: int = Field(
        ge=1, le=64, description="GPUs per inference engine (verl rollout tp; miles rollout_num_gpus_per_engine)."
    )
    gpuMemoryUtilization: float = Field(
        ge=0.1, le=0.99, description="Share of GPU memory the rollout engine may use; below 0.1 no model's weights "
        "and KV cache fit, 1.0 leaves nothing for CUDA graphs and the trainer's colocated state."
    )
    temperature: float = Field(ge=0, le=2, description="Sampling temperature (0 = greedy; above 2 sampling is noise).")


class VerlRollout(Rollout):
    maxModelLen: int | None = Field(default=None, ge=1, le=MAX_TOKENS,
                                    description="Rollout context; null or absent = maxPrompt + maxResponse.")


class MilesRollout(Rollout):
    NOT_HERE: ClassVar[dict[str, str]] = {
        "maxModelLen": "not used under framework miles: SGLang's context comes from the lengths; delete it"}


class Lora(Strict):
    """LoRA adapters on the actor. Absent or null: full fine-tuning."""

    rank: int = Field(ge=1, le=512, description="LoRA rank (vLLM serves at most 512). To turn LoRA off set "
                      "`lora: null` (rank 0 is no longer accepted).",
                      json_schema_extra={"x-grpo-hint": "to turn LoRA off set global.job.lora: null"})
    alpha: int = Field(ge=1, le=4096, description="LoRA alpha (scale = alpha / rank).")
    targetModules: str = Field(min_length=1, description="verl target_modules, e.g. `all-linear`.")


class Reward(Strict):
    model_config = conditional(
        only_when("url", "kind", ["external"], "only read with kind external (the other kinds have their own URL)"),
        required_when("url", "kind", "external"))
    kind: Literal["builtin", "service", "sandbox", "external"] = Field(
        description="builtin: the framework's rule-based scorer; service: this release's reward-service; "
        "sandbox: SandboxFusion code execution; external: a reward endpoint you run (`url`)."
    )
    url: str | None = Field(
        default=None, pattern=r"^https?://\S+$", max_length=2048,
        description="kind external only: the scoring URL. In-cluster names must be in the release namespace.",
    )
    timeoutSeconds: int | None = Field(
        default=None, ge=10, le=3600,
        description="framework verl: the reward client's timeout per request (GRPO_REWARD_TIMEOUT_S); absent: "
        "120 s. The reward service's deadlines and the pods' termination timing derive from it. miles' client "
        "has no such setting (aiohttp's 300 s), so under miles it must be left out (GRPO522).",
    )


class Trainer(Variant):
    project: str = Field(min_length=1, max_length=128, description="Experiment tracker project.")
    experiment: str = Field(min_length=1, max_length=128, description="Run name in the tracker.")
    saveFreq: int = Field(
        ge=-1, le=MAX_STEPS, description="Save a checkpoint every N steps; -1 = never.",
        # verl tests `save_freq > 0`, so 0 silently never saves: a run that then fails restarts from step 0.
        json_schema_extra={"not": {"const": 0}, "x-grpo-hint": "verl reads 0 as never save (the run could not "
                           "resume after a failure); write -1 for never, N >= 1 to save every N steps"})
    testFreq: int = Field(ge=-1, le=MAX_STEPS, description="Validate every N steps; -1 = never.")
    checkpointDir: RelPath = Field(description="Checkpoint root, relative to `global.storage.mountPath`.")
    logger: list[Literal["console", "tensorboard", "mlflow", "wandb"]] = Field(
        min_length=1, max_length=4, description="Where metrics go.")


class VerlTrainer(Trainer):
    totalEpochs: int = Field(ge=1, le=MAX_STEPS, description="Epochs over the training data (trainer.total_epochs).")
    keepCheckpoints: int | None = Field(
        default=None, ge=1, le=10_000, description="Keep the newest N checkpoints (trainer.max_actor_ckpt_to_keep); "
        "absent: verl's default null keeps every checkpoint.")


class MilesTrainer(Trainer):
    NOT_HERE: ClassVar[dict[str, str]] = {
        "totalEpochs": "not used under framework miles: it runs job.miles.numRollout rollouts; delete it",
        "keepCheckpoints": "not used under framework miles: miles dec268f7 has no checkpoint retention flag",
    }


class Data(Strict):
    trainFiles: list[RelPath] = Field(min_length=1, max_length=256,
                                      description="Parquet files relative to the storage mount.")
    valFiles: list[RelPath] = Field(min_length=1, max_length=256,
                                    description="Parquet files relative to the storage mount.")


class MilesData(Strict):
    """miles reads one prompt file (--prompt-data) and one eval file (--eval-prompt-data)."""

    trainFiles: list[RelPath] = Field(min_length=1, max_length=1, description="One JSONL file relative to the "
                                      "storage mount (miles --prompt-data takes one file; mix datasets beforehand).")
    valFiles: list[RelPath] = Field(min_length=1, max_length=1, description="One JSONL file relative to the "
                                    "storage mount (miles --eval-prompt-data).")


class Optim(Strict):
    """Actor optimizer (AdamW). Absent keys keep the framework default named in each description."""

    lr: float | None = Field(default=None, gt=0, le=0.1, description="Learning rate (verl actor.optim.lr, default "
                             "1e-6; miles --lr). Above 0.1 AdamW diverges for any LLM.")
    warmupSteps: int | None = Field(default=None, ge=0, le=MAX_STEPS, description="Linear warm-up steps (verl "
                                    "actor.optim.lr_warmup_steps, default -1 = use the ratio 0.0; miles "
                                    "--lr-warmup-iters).")
    schedule: Literal["constant", "cosine"] | None = Field(
        default=None, description="Decay after warm-up (verl FSDP actor.optim.lr_scheduler_type, Megatron "
        "actor.optim.lr_decay_style; default constant; miles --lr-decay-style).")
    weightDecay: float | None = Field(default=None, ge=0, le=1, description="AdamW weight decay (verl "
                                      "actor.optim.weight_decay, default 0.01; miles --weight-decay).")
    gradClip: float | None = Field(default=None, gt=0, le=1000, description="Gradient-norm clip (verl "
                                   "actor.optim.clip_grad, default 1.0; miles --clip-grad).")


class Kl(Strict):
    """A KL term against the reference model. Absent: verl's default, no KL (use_kl_loss and use_kl_in_reward
    false), so no reference model is loaded."""

    placement: Literal["loss", "reward"] = Field(description="loss: a KL loss term (verl actor.use_kl_loss; miles "
                                                 "--use-kl-loss); reward: a penalty on the reward (verl "
                                                 "algorithm.use_kl_in_reward; miles --kl-coef).")
    coef: float = Field(ge=0, le=10, description="Coefficient (verl actor.kl_loss_coef or algorithm.kl_ctrl.kl_coef,"
                        " default 0.001; miles --kl-loss-coef / --kl-coef).")
    estimator: Literal["k1", "k2", "k3", "low_var_kl"] = Field(
        description="KL estimator (verl actor.kl_loss_type / algorithm.kl_penalty; miles --kl-loss-type).")


class ClipRatio(Strict):
    low: float = Field(gt=0, le=1, description="PPO clip below 1 (verl actor.clip_ratio_low, default 0.2; miles "
                       "--eps-clip).")
    high: float = Field(gt=0, le=10, description="PPO clip above 1 (verl actor.clip_ratio_high, default 0.2; miles "
                        "--eps-clip-high). DAPO's clip-higher uses 0.28.")


class Offload(Strict):
    params: bool = Field(description="Actor parameters to CPU between phases (verl fsdp_config.param_offload / "
                         "megatron.param_offload, default false).")
    optimizer: bool = Field(description="Actor optimizer state to CPU (verl fsdp_config.optimizer_offload / "
                            "megatron.optimizer_offload, default false).")


class Resume(Strict):
    """Whether a run continues from a checkpoint. Absent: `disable` (never a silent resume of whatever sits in
    checkpointDir; verl's own default `auto` would)."""

    model_config = conditional(only_when("path", "mode", ["fromPath"], "only read with mode fromPath"),
                               required_when("path", "mode", "fromPath"))

    mode: Literal["auto", "disable", "fromPath"] = Field(
        description="auto: continue from the newest checkpoint in trainer.checkpointDir if any; disable: start at "
        "step 0; fromPath: continue from `path` (verl trainer.resume_mode auto | disable | resume_path).")
    path: RelPath | None = Field(
        default=None, description="mode fromPath only: a `global_step_N` directory relative to the storage mount "
        "(verl trainer.resume_from_path).")


class Stall(Strict):
    """When a followed verl attempt counts as stalled (docs/observability.md): no new step for
    max(floorSeconds, factor x the longest of its last 5 steps), or for startupSeconds before its first step."""

    action: Literal["off", "report", "resubmit"] = Field(
        default="report", description="report: a line in the submit's log, grpo_stall 1 until the next step and, "
        "with supervision.events, a Kubernetes Event on the head pod; resubmit: also stop the Ray job, which the "
        "supervisor then resubmits through the resume gate (within supervision.retries); off: no detection.")
    factor: float = Field(default=3.0, ge=1.5, le=100, description="How many times the longest recent step a "
                          "step may take before it is a stall.")
    floorSeconds: int = Field(default=600, ge=1, le=86_400, description="The least wait that is a stall, "
                              "whatever the recent steps took; also what a checkpoint or validation step may add "
                              "before the attempt has shown one.")
    startupSeconds: int = Field(default=3600, ge=1, le=86_400, description="The wait for an attempt's first step "
                                "(Ray workers, model load, inference engine, the validation before training).")
    gpuIdleMinutes: float | None = Field(default=None, gt=0, le=1440, description="Also a stall: every GPU of the "
                                         "run below gpuIdlePercent for this long while the attempt lives, as Ray's "
                                         "own reporter on each node reads them (the head's dashboard). Absent: not "
                                         "used.")
    gpuIdlePercent: float = Field(default=10, gt=0, le=100, description="The utilisation below which a GPU counts "
                                  "as idle for gpuIdleMinutes.")


class FabricGate(Strict):
    """Before training, on the nodes the run received: DCGM's diagnostics and NCCL all-reduces on each node and
    across all of them (docs/observability.md, "GPU and fabric gate"). A failure refuses the submit and names the
    node."""

    dcgmLevel: Literal[0, 1, 2, 3] = Field(default=1, description="`dcgmi diag -r` level on each node (1: seconds, "
                                           "2: about 2 minutes, 3: about 30); 0: no DCGM diagnostic. DCGM comes "
                                           "from the image, or a host engine named by DCGM_HOST_ENGINE (extraEnv).")
    maxMiB: int = Field(default=2048, ge=1, le=65_536, description="The largest all-reduce message, in MiB; the "
                        "catalogued bandwidth is compared at its own message size (2 to 16 GiB), so a smaller sweep is "
                        "not checked against it.")
    minBusBandwidthGBps: float | None = Field(default=None, gt=0, le=10_000, description="The bus bandwidth the "
                                              "all-reduce across nodes must reach; absent: half of the instance "
                                              "catalogue's published figure for the type (none: not checked).")
    timeoutSeconds: int = Field(default=1800, ge=60, le=86_400, description="The whole probe, placement included.")


# An IPv4 or IPv6 network in CIDR form, as a NetworkPolicy's ipBlock takes it.
Cidr = Annotated[str, StringConstraints(pattern=r"^([0-9]{1,3}(\.[0-9]{1,3}){3}/[0-9]{1,2}|[0-9A-Fa-f:]+/[0-9]{1,3})$",
                                        max_length=43)]


class Events(Strict):
    """Kubernetes Events from the followed run's supervisor, on the Ray head pod (docs/observability.md, Events)."""

    model_config = conditional(required_when("apiServerCidrs", "enabled", True))

    enabled: bool = Field(default=False, description="Post the stall detector's reports and each attempt's end as "
                          "Events on the Ray head pod (`kubectl describe pod`, `kubectl get events`). true: the "
                          "chart gives the head a service account (raycluster.head.pod.serviceAccountName, else its "
                          "own), a Role that may create events in the release namespace and its RoleBinding, mounts "
                          "its token in the head pod and lets the head reach apiServerCidrs.")
    apiServerCidrs: list[Cidr] | None = Field(
        default=None, min_length=1, max_length=16, description="Where the API server's endpoints are, for the "
        "head's egress (NetworkPolicies see the endpoint, not the `kubernetes` Service): on EKS the subnets of the "
        "control plane's network interfaces, or the addresses `kubectl get endpoints kubernetes -n default` lists, "
        "each as a /32. Required when enabled.")
    apiServerPort: int = Field(default=443, ge=1, le=65535, description="The port those endpoints listen on (EKS: "
                               "443; kubeadm clusters: 6443).")


class Supervision(Strict):
    """What the in-pod submit does after it submitted the run and follows it (`run-on-cluster.sh --follow`)."""

    retries: int = Field(default=0, ge=0, le=100, description="Resubmissions after a failed attempt (the driver "
                         "exited non-zero or was lost, or it exited 0 with steps left), each through the resume gate; "
                         "the submit gives up sooner on a refusal, a resume that starts over, or two attempts that "
                         "saved no checkpoint (docs/day-2.md, Supervision). 0: one attempt, its outcome still checked.")
    stepMetricsPort: int | None = Field(default=None, ge=1024, le=65535, description="Serve the running attempt's "
                                        "step metrics (grpo_step_*, grpo_stall) in Prometheus's text format on this "
                                        "port of the Ray head, at /metrics, while the submit follows the run; the "
                                        "Ray PodMonitor scrapes it. verl: read from its step file; miles: its own "
                                        "Prometheus backend serves on this port of the driver's node "
                                        "(--use-prometheus) and the submit reads the steps from there "
                                        "(docs/observability.md). Not one of the ports Ray itself opens in the pod. "
                                        "Absent: not served.",
                                        json_schema_extra={"not": {"enum": sorted(POD_PORTS.values())},
                                                           "x-grpo-hint": "Ray already listens there (KubeRay's "
                                                           "defaults: " + ", ".join(
                                                               f"{name} {port}" for name, port in POD_PORTS.items())
                                                           + "); choose another port, e.g. 9108"})
    stall: Stall | None = Field(default=None, description="The stall detector of a followed run (verl; miles with "
                                "stepMetricsPort, whose collector gives the steps). Absent: it "
                                "reports with the defaults below.")
    events: Events | None = Field(default=None, description="Kubernetes Events about the run. Absent: none (the "
                                  "submit's log and grpo_stall carry the same reports).")


class Deadline(Strict):
    """A wall-clock deadline: the framework saves a checkpoint before it (docs/day-2.md, Deadlines and stopping)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True,
                              json_schema_extra={"anyOf": [{"required": ["end"]}, {"required": ["hours"]}]})

    end: Annotated[str, StringConstraints(pattern=RFC3339.pattern)] | None = Field(
        default=None, description="When the GPUs go away, RFC 3339 with its offset, quoted (\"2026-12-04T11:30:00Z\": "
        "a Capacity Block's end, or the earlier moment its instances are reclaimed). verl: the Ray job's "
        "SAGEMAKER_CURRENT_CAPACITY_BLOCK_EXPIRATION_TIMESTAMP.")
    hours: float | None = Field(default=None, gt=0, le=8760, description="A budget in hours from the in-pod "
                                "submit's start (or its --started-at); with `end`, the earlier of the two applies.")
    marginMinutes: float = Field(default=10, ge=0, le=1440, description="What the planned save leaves before the "
                                 "deadline (verl: part of trainer.esi_redundant_time).")
    checkpointWriteMinutes: float | None = Field(
        default=None, gt=0, le=1440, description="One checkpoint write; absent: estimated at 12 bytes per model "
        "parameter written at 1 GB/s (an assumption; verl logs the real one as timing_s/save_checkpoint).")


class MilesDeadline(Deadline):
    stepMinutes: float | None = Field(default=None, gt=0, le=1440, description="miles: the longest rollout step "
                                      "expected; the supervisor creates --save-trigger-sentinel this long plus the "
                                      "write and the margin before the deadline (required with a deadline: grpo-lint "
                                      "GRPO907).")


class Validation(Strict):
    """Sampling for validation runs (every trainer.testFreq steps). Absent keys keep the framework default."""

    n: int | None = Field(default=None, ge=1, le=1024, description="Samples per validation prompt (verl "
                          "rollout.val_kwargs.n, default 1; miles --n-samples-per-eval-prompt). Write the key "
                          "quoted, `\"n\": 4`: Helm reads a bare `n` key as the boolean false.")
    temperature: float | None = Field(default=None, ge=0, le=2, description="Temperature; 0 = greedy (verl "
                                      "rollout.val_kwargs.temperature, default 0, with do_sample derived from it; "
                                      "miles --eval-temperature).")
    topP: float | None = Field(default=None, gt=0, le=1, description="Nucleus sampling (verl "
                               "rollout.val_kwargs.top_p, default 1.0; miles --eval-top-p).")


class VerlBatch(Strict):
    """verl batch sizes, in prompts except where named per GPU. See docs/batch-math.md."""

    model_config = conditional(
        only_when("ppoMaxTokenLenPerGpu", "useDynamicBsz", [True], "only read with useDynamicBsz: true"),
        only_when("ppoMicroBatchSizePerGpu", "useDynamicBsz", [False],
                  "not read with useDynamicBsz: true (the token budget sizes micro batches)"),
        only_when("logProbMicroBatchSizePerGpu", "useDynamicBsz", [False],
                  "not read with useDynamicBsz: true (the token budget sizes micro batches)"),
    )  # a missing size is GRPO304's finding, with the values to use

    trainBatchSize: int = Field(ge=1, le=MAX_PROMPTS, description="data.train_batch_size (B, prompts per step).")
    ppoMiniBatchSize: int = Field(ge=1, le=MAX_PROMPTS,
                                  description="actor.ppo_mini_batch_size (M, prompts per update).")
    ppoMicroBatchSizePerGpu: int | None = Field(
        default=None, ge=1, le=MAX_PER_GPU, description="actor.ppo_micro_batch_size_per_gpu (m)."
    )
    logProbMicroBatchSizePerGpu: int | None = Field(
        default=None, ge=1, le=MAX_PER_GPU, description="rollout + ref log-prob micro batch (lp)."
    )
    useDynamicBsz: bool = Field(description="Token-budget micro batching instead of fixed micro batches.")
    ppoMaxTokenLenPerGpu: int | None = Field(default=None, ge=1, le=MAX_TOKEN_BUDGET,
                                             description="Token budget per GPU when useDynamicBsz.")


HydraKey = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)+$", max_length=200)]
OverrideValue = str | int | float | bool | None | list[str | int | float | bool]


class Verl(Strict):
    batch: VerlBatch
    useV1Trainer: bool = Field(description="verl 0.9 trainer.use_v1 (pads batches instead of crashing).")
    overrides: dict[HydraKey, OverrideValue] | None = Field(
        default=None, max_length=200,
        description="Escape hatch: verl config key -> value, passed as Hydra overrides. Each key must be a verl "
        "0.9.1 config key (tools/grpo_stack/catalog/verl_keys.json) that no typed key sets (e.g. "
        "actor_rollout_ref.actor.optim.lr is refused: set job.optim.lr instead), its value of the type verl "
        "declares for it where it declares one (grpo-lint GRPO350).")


class Miles(Strict):
    """miles arguments. Actor world W = actorNodes x gpusPerNode."""

    model_config = conditional(
        only_when("actorNodes", "colocate", [False], "not read with colocate: true (the actor uses every node)"),
        required_when("actorNodes", "colocate", False),
        only_when("maxTokensPerGpu", "useDynamicBatchSize", [True], "only read with useDynamicBatchSize: true"))

    rolloutBatchSize: int = Field(ge=1, le=MAX_PROMPTS, description="--rollout-batch-size (R, prompts per rollout).")
    globalBatchSize: int = Field(ge=1, le=MAX_PROMPTS * 1024,
                                 description="--global-batch-size (G, samples per optimizer step).")
    microBatchSize: int = Field(ge=1, le=MAX_PER_GPU, description="--micro-batch-size (b).")
    numRollout: int = Field(ge=1, le=MAX_STEPS, description="--num-rollout (training iterations).")
    colocate: bool = Field(description="Train and roll out on the same GPUs (--colocate).")
    actorNodes: int | None = Field(default=None, ge=1, le=4096,
        description="Nodes for training when not colocated; the rest of the cluster rolls out. null if colocate."
    )
    useDynamicBatchSize: bool = Field(description="--use-dynamic-batch-size.")
    maxTokensPerGpu: int | None = Field(
        default=None, ge=1, le=MAX_TOKEN_BUDGET, description="--max-tokens-per-gpu (needed with dynamic batch size)."
    )
    extraArgs: list[str] = Field(
        default_factory=list,
        description="Raw miles/Megatron flags for what the values do not type, e.g. [\"--lr-warmup-iters\", \"10\"]; "
        "checked against the pinned build's flag catalogue; a flag the values set is refused.",
    )


# Variables the chart already sets on the Ray pods (charts/.../raycluster/templates/_helpers.tpl): a second
# entry of the same name would silently replace or be replaced by the chart's. Each names the key that sets it.
_TRACKING = ("a secret: the chart sets it from the Secret key global.secrets.tracking ({name: <secret>, key: %s}); "
             "create the Secret and set that key, never the token in the values")
CHART_ENV = {
    "NCCL_SOCKET_IFNAME": "set by the chart from raycluster.nccl.socketIfname; set that key",
    "NCCL_DEBUG": "set by the chart from raycluster.nccl.debug; set that key",
    "NCCL_NET_GDR_LEVEL": "set by the chart from raycluster.nccl.netGdrLevel; set that key",
    "FI_PROVIDER": "set by the chart from raycluster.libfabric.provider; set that key",
    "FI_EFA_USE_DEVICE_RDMA": "set by the chart from raycluster.libfabric.efaUseDeviceRdma (true/false); set that key",
    "GRPO_JOB_SPEC": "set by the chart itself (the job spec it mounts)",
    "GRPO_REWARD_URL": "set by the chart from global.job.reward (kind external: url) or the reward service",
    "HF_TOKEN": "a secret: the chart sets it from the Secret key global.secrets.hfToken ({name: hf-token, key: "
                "HF_TOKEN}); create the Secret (`kubectl create secret generic hf-token --from-literal=HF_TOKEN=...`) "
                "and set that key, never the token in the values",
    "TENSORBOARD_DIR": "set by the chart under global.job.trainer.checkpointDir when trainer.logger has tensorboard",
    "WANDB_API_KEY": _TRACKING % "WANDB_API_KEY",
    "MLFLOW_TRACKING_TOKEN": _TRACKING % "MLFLOW_TRACKING_TOKEN",
}


class SecretSource(Strict):
    secretKeyRef: SecretRef = Field(description="The Secret key whose value the variable gets.")


def _env_var_schema(schema: dict) -> None:
    schema["oneOf"] = [{"required": ["value"]}, {"required": ["valueFrom"]}]
    schema["allOf"] = [{"if": {"properties": {"name": {"const": name}}, "required": ["name"]},
                        "then": {"properties": {"name": {"not": {"const": name}, "x-grpo-reason":
                                                         f"name: {name} is {why}"}}}}
                       for name, why in CHART_ENV.items()]


class EnvVar(Strict):
    """One variable on every Ray pod: a literal `value` (grpo-lint GRPO201 reports credential-like ones) or
    `valueFrom.secretKeyRef`."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=lambda schema: _env_var_schema(schema))
    name: EnvName = Field(max_length=128, description="Variable name (not one the chart sets).")
    value: str | None = Field(default=None, max_length=4096, description="Literal value (no credentials).")
    valueFrom: SecretSource | None = Field(default=None, description="Or: a Secret key (`secretKeyRef`).")


REMOVED = {
    "frameworkVersion": "removed: the framework version and rollout engine come from the image the values "
    "select (raycluster.image, see images/README.md); delete it",
}


class JobBase(Variant):
    """Keys every variant has."""

    lengths: Lengths
    reward: Reward
    seed: int | None = Field(default=None, ge=0, le=2**32 - 1, description="Random seed of the actor engine, the "
                             "rollout and the data order (verl fsdp_config.seed / megatron.seed, rollout.seed, "
                             "data.seed; default 42; miles --seed, default 1234).")
    optim: Optim | None = Field(default=None, description="Actor optimizer; absent keeps the framework defaults.")
    kl: Kl | None = Field(default=None, description="KL against the reference model; absent: no KL term.")
    entropyCoef: float | None = Field(default=None, ge=0, le=1, description="Entropy bonus coefficient (verl "
                                      "actor.entropy_coeff, default 0; miles --entropy-coef).")
    clipRatio: ClipRatio | None = Field(default=None, description="PPO clip ratios; absent: 0.2 / 0.2 (verl).")
    resume: Resume | None = Field(default=None, description="Resume behaviour; absent: disable (fail closed).")
    supervision: Supervision | None = Field(default=None, description="Retries of a followed run; absent: none.")
    fabricGate: FabricGate | None = Field(default=None, description="The GPU and fabric gate before training; "
                                          "absent: not run.")
    validation: Validation | None = Field(default=None, description="Validation sampling; absent: verl defaults.")
    extraEnv: list[EnvVar] | None = Field(default=None, max_length=64, description="Extra variables on every Ray "
                                          "pod (the trainer's environment), e.g. MLFLOW_TRACKING_URI.")


class VerlJob(JobBase):
    NOT_HERE: ClassVar[dict[str, str]] = {
        **REMOVED, "miles": "not used under framework verl: delete the miles section"}
    framework: Literal["verl"] = Field(description="Training framework: verl | miles (selects the keys below).")
    model: ModelRef
    data: Data
    rollout: VerlRollout
    lora: Lora | None = Field(default=None, description="LoRA adapters; null or absent: full fine-tuning.")
    trainer: VerlTrainer
    deadline: Deadline | None = Field(default=None, description="Wall-clock deadline; absent: none.")
    offload: Offload | None = Field(default=None, description="Actor offload to CPU; absent: none (verl default).")
    lossAggregation: Literal["token-mean", "seq-mean-token-sum", "seq-mean-token-mean", "seq-mean-token-sum-norm"] \
        | None = Field(default=None, description="How token losses become the batch loss (verl actor.loss_agg_mode, "
                       "default token-mean).")
    verl: Verl


class VerlFsdpJob(VerlJob):
    backend: Literal["fsdp"] = Field(description="Training engine: fsdp | megatron (miles: megatron only).")
    parallel: FsdpParallel


class VerlMegatronJob(VerlJob):
    backend: Literal["megatron"] = Field(description="Training engine: fsdp | megatron (miles: megatron only).")
    parallel: MegatronParallel


class MilesJob(JobBase):
    NOT_HERE: ClassVar[dict[str, str]] = {
        **REMOVED,
        "verl": "not used under framework miles: delete the verl section",
        "lora": "not used under framework miles: grpo-stack does not map miles LoRA yet (use framework verl)",
        "offload": "not used under framework miles: colocated miles offloads the whole actor itself (--offload-train)",
        "lossAggregation": "not used under framework miles: miles has no verl-style loss aggregation modes",
    }
    framework: Literal["miles"] = Field(description="Training framework: verl | miles (selects the keys below).")
    model: MilesModelRef
    backend: Literal["megatron"] = Field(description="Training engine: miles trains with Megatron only.")
    data: MilesData
    parallel: MegatronParallel
    rollout: MilesRollout
    trainer: MilesTrainer
    deadline: MilesDeadline | None = Field(default=None, description="Wall-clock deadline; absent: none.")
    miles: Miles


# (framework, backend) -> the model of that run; the JSON Schema picks one with if/then on both keys.
JOB_VARIANTS: dict[tuple[str, str], type[JobBase]] = {
    ("verl", "fsdp"): VerlFsdpJob,
    ("verl", "megatron"): VerlMegatronJob,
    ("miles", "megatron"): MilesJob,
}
BACKENDS = {"verl": ("fsdp", "megatron"), "miles": ("megatron",)}


def _job_tag(data: object) -> str | None:
    if isinstance(data, dict):
        return f"{data.get('framework')}-{data.get('backend')}"
    return f"{getattr(data, 'framework', None)}-{getattr(data, 'backend', None)}"


Job = Annotated[
    Annotated[VerlFsdpJob, Tag("verl-fsdp")] | Annotated[VerlMegatronJob, Tag("verl-megatron")]
    | Annotated[MilesJob, Tag("miles-megatron")],
    Discriminator(_job_tag),
]


def not_here_properties(model: type[Variant], known: set[str]) -> dict[str, dict]:
    """JSON Schema for the keys `model` rejects: any value but null fails, with the one-line reason."""
    # null (= unset) is accepted, so a file that spells out `key: null` still reads as "not set".
    return {key: {"type": "null", "x-grpo-reason": _reason(key, why)} for key, why in model.NOT_HERE.items()
            if key not in known}


def job_schema(defs: dict) -> dict:
    """`global.job`: the framework/backend pair selects a variant definition (if/then); each variant is strict
    and names why a key of another variant does not apply."""
    clauses = []
    for (framework, backend), model in JOB_VARIANTS.items():
        clauses.append({
            "if": {"properties": {"framework": {"const": framework}, "backend": {"const": backend}},
                   "required": ["framework", "backend"]},
            "then": {"$ref": f"#/$defs/{model.__name__}"},
        })
    for framework, backends in BACKENDS.items():
        clauses.append({
            "if": {"properties": {"framework": {"const": framework}}, "required": ["framework"]},
            "then": {"properties": {"backend": {
                "enum": list(backends),
                "x-grpo-reason": f"backend: framework {framework} trains with {' or '.join(backends)}"}}},
        })
    keys = sorted({k for m in JOB_VARIANTS.values() for k in (*m.model_fields, *m.NOT_HERE)})
    return {
        "type": "object",
        "description": "The training run (see docs/values.md, global.job).",
        "required": ["framework", "backend"],
        "properties": {
            "framework": {"enum": sorted(BACKENDS), "description": "Training framework."},
            "backend": {"enum": ["fsdp", "megatron"], "description": "Training engine."},
            **{k: {} for k in keys if k not in ("framework", "backend")},
        },
        "additionalProperties": False,
        "allOf": clauses,
    }
