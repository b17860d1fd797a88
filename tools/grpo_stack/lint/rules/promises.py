"""Every place where one component's setting must agree with another's or with the hardware, and what keeps it:
the rule that checks it, or the construction that makes a mismatch impossible and the test that proves it
(rendered into docs/rules.md by docs.py; tests/lint/test_promises.py checks every row's rule is registered, its
fixtures exist and every named test exists). A row with neither is a gap, listed as such: a misconfiguration there
lints clean today.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Check:
    code: str
    good: str  # fixture file under tests/lint/rules/fixtures/<code>/
    bad: str


GUARD_KINDS = {
    "schema": "by schema",  # no values key can express the mismatch (a file that tries is refused)
    "template": "by construction",  # the chart or the builder derives both sides from one value
    "runtime": "refused when run",  # the tool or a gate in the pod refuses the mismatch before any work starts
}


@dataclass(frozen=True)
class Guard:
    """A promise kept without a lint rule, and the test that proves it is kept."""

    kind: str  # a key of GUARD_KINDS
    how: str
    test: str  # tests/<path>.py::<test function>


@dataclass(frozen=True)
class Promise:
    area: str
    promise: str
    between: str
    checks: tuple[Check, ...] = ()
    guards: tuple[Guard, ...] = ()
    gap: str = ""  # for a row nothing keeps yet: what a rule would have to compare


WAITS = "waits vs budgets"
SERVED = "served model vs trained model"
PARALLEL = "engine parallelism vs model shape"
WORKERS = "pod workers vs pod resources"
IMAGES = "image contents vs declared versions"
NODES = "node resources vs pod requests"
WIRING = "components reaching each other"

PROMISES: tuple[Promise, ...] = (
    Promise(WAITS, "A Deployment's progress deadline, and the `kubectl rollout status --timeout` the docs print, "
            "outlast its startup probe's budget", "vLLM / sandbox Deployment ↔ its startupProbe ↔ NOTES",
            (Check("GRPO501", "good-long-startup.yaml", "bad-manifest-default-deadline.yaml"),)),
    Promise(WAITS, "A shell loop that waits for another component fails when it gives up", "waiting pod ↔ the "
            "component it waits on", (Check("GRPO841", "good-wait-loops.yaml", "bad-wait-loops.yaml"),)),
    Promise(WAITS, "lm-eval waits for the vLLM server exactly as long as the server may take to start, then fails "
            "naming it", "lm-eval Job readiness loop ↔ vLLM startupProbe budget",
            (Check("GRPO841", "good-wait-loops.yaml", "bad-wait-loops.yaml"),),
            (Guard("template", "the Job reads its wait from the vllm ConfigMap's `startupBudgetSeconds`, which the "
                   "vllm chart computes from the same startupProbe values the Deployment renders",
                   "tests/eval/test_eval_phase.py::test_lm_eval_waits_exactly_as_long_as_vllm_may_start"),)),
    Promise(WAITS, "The training submit waits for the Ray pods as long as they take to come up",
            "run-on-cluster.sh `--wait-timeout` ↔ GPU node provisioning + image pull of the RayCluster pods",
            gap="the wait is a command-line flag (30m default; it fails naming the cluster when spent), and no rule "
            "compares it with the node provisioning and image pull the values imply"),
    Promise(WAITS, "The training job's first reward and code-run calls come after the reward service and the "
            "sandbox are Ready", "submit (run-on-cluster.sh) ↔ reward-service / sandbox-fusion readiness ↔ the "
            "reward client's retries",
            guards=(Guard("runtime", "run-on-cluster.sh waits (up to `--wait-timeout`) for the release's "
                          "reward-service and sandbox-fusion Deployments to be Available and submits nothing until "
                          "they are; verl's client would give up after 6 attempts (25 s of backoff in all)",
                          "tests/recipes/test_run_on_cluster.py::"
                          "test_reward_or_sandbox_not_available_stops_the_submission"),)),
    Promise(WAITS, "The reward service answers every request before the trainer's reward client gives up, also "
            "while its pod terminates", "global.job.reward.timeoutSeconds (verl GRPO_REWARD_TIMEOUT_S, 120 s) / "
            "miles' aiohttp 300 s ↔ REWARD_DEADLINE_S ↔ preStop + terminationGracePeriodSeconds ↔ "
            "reward-service.hardTimeoutSeconds / sandbox.runTimeoutSeconds",
            (Check("GRPO522", "good-derived-deadlines.yaml", "bad-client-timeout-too-short.yaml"),
             Check("GRPO522", "good-derived-deadlines.yaml", "bad-hard-timeout-past-deadline.yaml"),
             Check("GRPO522", "good-derived-deadlines.yaml", "bad-miles-timeout.yaml")),
            (Guard("template", "the chart derives the service's deadline (half the client timeout), the preStop delay "
                   "and the grace period from the one client timeout (reward-service.timing)",
                   "tests/reward/test_reward_values_fit_image.py::test_verl_deadlines_follow_the_trainer_timeout"),
             Guard("template", "miles' remote_rm (miles 31f1ca9) has no timeout of its own: the chart uses aiohttp's "
                   "default total, 300 s", "tests/reward/test_reward_values_fit_image.py::"
                   "test_miles_deadlines_follow_its_clients_timeout"))),
    Promise(WAITS, "A utility pod others wait on is Ready only after its set-up", "fsx-utils ↔ whoever waits "
            "for it", (Check("GRPO849", "good-utility-pod.yaml", "bad-utility-pod.yaml"),)),
    Promise(WAITS, "A readiness or startup probe checks the service it gates", "probe ↔ the server in the pod",
            (Check("GRPO844", "good-probes.yaml", "bad-probes.yaml"),)),
    Promise(SERVED, "The eval server's context holds what training generates and what lm-eval asks for",
            "vllm.maxModelLen ↔ global.job.lengths ↔ lm-eval max_gen_toks / max_length",
            (Check("GRPO502", "good-covers-training.yaml", "bad-short-eval-context.yaml"),),
            (Guard("template", "lm-eval's generation budget and context are rendered from global.job.lengths, "
                   "never typed in the lm-eval section",
                   "tests/eval/test_eval_phase.py::test_lm_eval_budgets_are_trainings"),)),
    Promise(SERVED, "The eval server serves a checkpoint the job saves, from the job's own checkpoint directory",
            "global.eval.checkpointStep ↔ trainer.saveFreq / framework ↔ `<checkpointDir>/global_step_<N>/merged`",
            (Check("GRPO903", "good-saved-step.yaml", "bad-step-never-saved.yaml"),
             Check("GRPO903", "good-saved-step.yaml", "bad-run-saves-nothing.yaml"),
             Check("GRPO903", "good-miles-base-model.yaml", "bad-miles-checkpoint.yaml")),
            (Guard("schema", "no values key names the served model (a `vllm.modelPath` is refused); the chart mounts "
                   "`<global.job.trainer.checkpointDir>/global_step_<N>/merged` of the values file the run trained "
                   "with, or the base model `global.job.model.path`",
                   "tests/eval/test_eval_wiring.py::test_served_model_is_derived_never_typed"),)),
    Promise(SERVED, "The served model was merged from this run, at this step, with this LoRA shape",
            "merged model's grpo-provenance.json ↔ the evaluation release's run identity and step",
            guards=(Guard("runtime", "the vLLM init container refuses a merged model whose provenance names another "
                          "experiment, checkpointDir, base model, framework, backend, step or LoRA rank/alpha/targets",
                          "tests/eval/test_merge.py::"
                          "test_fsdp_lora_checkpoint_merges_to_a_model_that_matches_base_plus_adapter"),
                    Guard("template", "the identity the gate expects is rendered from the same values as the one "
                          "`grpo-eval merge` writes", "tests/eval/test_eval_phase.py::"
                          "test_provenance_run_identity_is_the_charts"))),
    Promise(SERVED, "A LoRA run is evaluated with its own adapter folded in, never as the bare base model",
            "global.job.lora ↔ the checkpoint's adapter ↔ the weights vLLM serves",
            guards=(Guard("template", "vLLM serves only the merged directory, with no adapter arguments "
                          "(`--enable-lora`, `--lora-modules`)",
                          "tests/eval/test_eval_wiring.py::test_vllm_serves_only_merged_weights"),
                    Guard("runtime", "`grpo-eval merge` refuses an adapter whose rank, alpha or targets differ from "
                          "global.job.lora", "tests/eval/test_merge.py::test_mismatched_adapter_is_refused"),
                    Guard("runtime", "`grpo-eval merge` refuses a LoRA checkpoint whose adapter would scale to "
                          "nothing (no lora_train_meta.json)",
                          "tests/eval/test_merge.py::test_verl_checkpoint_without_lora_metadata_is_refused"))),
    Promise(SERVED, "lm-eval asks for the model vLLM serves, and the served model's own tokenizer reads the prompts",
            "lm-eval model_args ↔ vLLM --served-model-name ↔ the merged directory's tokenizer",
            guards=(Guard("template", "both names come from one helper (grpo-common.servedModelName); lm-eval sends "
                          "text (`tokenized_requests=False`, no tokenizer of its own) and vLLM loads no `--tokenizer` "
                          "but the model directory's", "tests/eval/test_eval_wiring.py::"
                          "test_lm_eval_asks_for_the_served_model_in_text"),)),
    Promise(SERVED, "The model staged on the volume is the model the job trains", "fsx-utils.model.repo ↔ "
            "global.job.model.preset", (Check("GRPO561", "good-preset-repo.yaml", "bad-other-model.yaml"),)),
    Promise(SERVED, "The rollout engine's context fits the model and holds prompt + response (verl's vLLM, "
            "miles' SGLang)", "rollout max_model_len / SGLang context ↔ model config ↔ job lengths",
            (Check("GRPO313", "good-max-model-len.yaml", "bad-max-model-len-truncates.yaml"),
             Check("GRPO906", "good-within-context.yaml", "bad-response-beyond-context.yaml"))),
    Promise(SERVED, "The LoRA rank trained is one vLLM serves", "job LoRA rank ↔ vLLM max_lora_rank list",
            (Check("GRPO305", "good-lora-rank-served.yaml", "bad-lora-rank-rounded-up.yaml"),)),
    Promise(PARALLEL, "Training GPUs split into whole tp × pp × cp replicas", "trainer parallelism ↔ GPU count",
            (Check("GRPO301", "good-tp-divides-gpus.yaml", "bad-tp-does-not-divide-gpus.yaml"),)),
    Promise(PARALLEL, "Training (Megatron: verl's megatron backend and miles) parallelism fits the model: heads ÷ "
            "tp, layers ÷ pp (and vpp), experts ÷ ep, sequence ÷ 2·cp", "trainer tp/pp/ep/cp ↔ model config",
            (Check("GRPO315", "good-heads-tp.yaml", "bad-heads-tp.yaml"),
             Check("GRPO315", "good-miles-heads-tp.yaml", "bad-miles-heads-tp.yaml"),
             Check("GRPO316", "good-layers-pp.yaml", "bad-layers-pp.yaml"),
             Check("GRPO317", "good-experts-ep.yaml", "bad-experts-ep.yaml"),
             Check("GRPO323", "good-cp4.yaml", "bad-cp3.yaml"))),
    Promise(PARALLEL, "Training (FSDP Ulysses) sequence parallelism fits the heads and the GPUs",
            "trainer ulysses sp ↔ model heads ↔ GPU count",
            (Check("GRPO314", "good-ulysses-heads.yaml", "bad-ulysses-heads.yaml"),)),
    Promise(PARALLEL, "Rollout engine tensor parallelism fits the model's heads (verl's vLLM, miles' SGLang)",
            "rollout tp ↔ model config",
            (Check("GRPO319", "good-rollout-heads.yaml", "bad-rollout-heads.yaml"),
             Check("GRPO319", "good-sglang-rollout-heads.yaml", "bad-sglang-rollout-heads.yaml"))),
    Promise(PARALLEL, "Rollout engines tile the GPUs and fill whole nodes", "rollout tp / placement ↔ GPUs per node",
            (Check("GRPO312", "good-rollout-tp.yaml", "bad-rollout-replica-straddles-nodes.yaml"),
             Check("GRPO322", "good-split-placement.yaml", "bad-engine-larger-than-rollout-gpus.yaml"))),
    Promise(PARALLEL, "The eval server's tensor parallelism fits the served model's heads, its container's GPUs and "
            "its node's GPUs", "vllm.tensorParallel ↔ served model config ↔ vLLM container GPU limit ↔ "
            "vllm.instanceType GPUs",
            (Check("GRPO902", "good-eval-tp-divides-heads.yaml", "bad-eval-tp-splits-no-heads.yaml"),
             Check("GRPO904", "good-manifest-vllm.yaml", "bad-manifest-vllm.yaml"),
             Check("GRPO601", "good-eval-server-fits.yaml", "bad-eval-server-tp-above-node-gpus.yaml"))),
    Promise(PARALLEL, "The eval server's GPU memory share holds its slice of the weights and one full-length "
            "sequence", "model size / tensor parallel + KV cache ↔ GPU memory of vllm.instanceType × "
            "gpuMemoryUtilization",
            (Check("GRPO905", "good-eval-server-fits.yaml", "bad-eval-server-kv-cache.yaml"),)),
    Promise(PARALLEL, "Every phase of training fits its GPUs' memory (rollout engine, log-prob and reference "
            "forward, training step, weight sync; KV cache; host RAM under offload)",
            "trainer parallelism / offload / micro batch / LoRA ↔ rollout engine share ↔ GPU and node memory",
            (Check("GRPO920", "good-72b-2-p5en-offload.yaml", "bad-72b-full-finetune-2-p5en.yaml"),
             Check("GRPO920", "good-shipped-rollout.yaml", "bad-rollout-weights-on-one-gpu.yaml"),
             Check("GRPO920", "good-shipped-rollout.yaml", "bad-miles-sglang-share.yaml"),
             Check("GRPO920", "good-shipped-rollout.yaml", "bad-kv-below-one-sequence.yaml"),
             Check("GRPO920", "good-manifest-rayjob-72b-offload.yaml", "bad-manifest-rayjob-72b-on-2-p5en.yaml"))),
    Promise(WORKERS, "The training batch splits over the data-parallel ranks the GPUs give",
            "job batch sizes ↔ trainer GPUs and parallelism",
            (Check("GRPO302", "good-qwen25-72b-dp3-b384.yaml", "bad-qwen25-72b-dp3-b256.yaml"),
             Check("GRPO306", "good-fsdp-48gpu-mini48.yaml", "bad-fsdp-48gpu-mini64.yaml"),
             Check("GRPO307", "good-micro-divides.yaml", "bad-micro-does-not-divide.yaml"),
             Check("GRPO320", "good-global-batch-dp8.yaml", "bad-global-batch-dp12.yaml"))),
    Promise(WORKERS, "The per-GPU token budget holds the longest sequence", "dynamic batch budget ↔ job lengths",
            (Check("GRPO310", "good-verl-budget.yaml", "bad-verl-budget-below-sequence.yaml"),)),
    Promise(WORKERS, "A Ray head without a CUDA driver offers no CPUs to CUDA-importing actors",
            "Ray head resources ↔ actor placement",
            (Check("GRPO845", "good-zero-cpu-head.yaml", "bad-driverless-head.yaml"),)),
    Promise(WORKERS, "GPU and EFA requests equal their limits (Ray reads GPUs from limits)",
            "pod device requests ↔ limits ↔ Ray num-gpus",
            (Check("GRPO846", "good-device-limits.yaml", "bad-device-requests.yaml"),)),
    Promise(WORKERS, "The reward service runs one scoring worker per CPU its pod requests (one CPU left for the HTTP "
            "process)", "reward-service.workers ↔ reward-service.resources.cpu; REWARD_WORKERS ↔ the container's "
            "CPU limit",
            (Check("GRPO520", "good-worker-per-cpu.yaml", "bad-more-workers-than-cpus.yaml"),
             Check("GRPO520", "good-manifest-reward-pods.yaml", "bad-manifest-reward-pods.yaml"))),
    Promise(WORKERS, "The reward pod's memory holds every scoring worker's own memory cap",
            "reward-service.workers × REWARD_WORKER_MEMORY_MB ↔ reward-service.resources.memory",
            (Check("GRPO520", "good-worker-per-cpu.yaml", "bad-memory-below-worker-caps.yaml"),)),
    Promise(WORKERS, "The code runs the reward service sends fit the sandbox's CPUs",
            "reward-service.replicas × sandbox.concurrency ↔ sandbox-fusion.replicas × resources.cpu",
            (Check("GRPO521", "good-sandbox-scaled.yaml", "bad-runs-outnumber-sandbox-cpus.yaml"),)),
    Promise(WORKERS, "The code runs a sandbox pod gets fit its memory, with room left for the server",
            "reward-service.replicas × sandbox.concurrency × sandbox.memoryMb ↔ sandbox-fusion.replicas × "
            "resources.memory", (Check("GRPO521", "good-sandbox-scaled.yaml", "bad-run-memory-exceeds-pod.yaml"),
                                 Check("GRPO521", "good-sandbox-scaled.yaml", "bad-runs-take-whole-limit.yaml"))),
    Promise(WORKERS, "The trainers' concurrent reward requests fit the reward service's workers within its queue "
            "deadline", "rollout reward concurrency (verl workers, miles connections) ↔ reward-service.replicas × "
            "workers ↔ REWARD_DEADLINE_S",
            gap="no rule compares how many samples the rollout scores at once with the reward pods' workers; an "
            "undersized service answers 503 overloaded past its queue deadline, a fault and never a reward"),
    Promise(IMAGES, "The framework image carries the framework version the values declare",
            "global.job.framework ↔ raycluster.image.tag / rayVersion ↔ images/ Dockerfiles",
            (Check("GRPO330", "good-miles-image.yaml", "bad-verl-image-under-miles.yaml"),),
            (Guard("template", "the catalogue GRPO330 reads is checked against the Dockerfiles and requirements "
                   "that build each tag",
                   "tests/job/test_image_catalog.py::test_verl_image_pins_the_catalogued_versions"),
             Guard("template", "each catalogued tag is the one images/README.md builds from its Dockerfile",
                   "tests/job/test_image_catalog.py::test_dockerfile_builds_the_catalogued_tag"))),
    Promise(IMAGES, "The fsx-utils image carries the grpo-data / grpo-models of this chart's version",
            "fsx-utils image tag ↔ chart appVersion ↔ installed tools",
            (Check("GRPO849", "good-utility-pod.yaml", "bad-utility-pod.yaml"),),
            (Guard("runtime", "the pod's readiness probe is `grpo-data version --expect <appVersion>`",
                   "tests/data/test_where_they_run.py::test_pod_installs_nothing_and_is_ready_only_on_this_version"),
             Guard("template", "the chart's appVersion, the image tag and the tools' version are one number",
                   "tests/data/test_where_they_run.py::test_chart_image_and_tools_share_one_version"))),
    Promise(IMAGES, "The reward routes name only scorers the reward-service image has",
            "reward-service.routes ↔ the image's scorer registry",
            guards=(Guard("schema", "the values schema's scorer list is the image's registry; an unknown scorer is "
                          "refused",
                          "tests/reward/test_reward_chart.py::test_schema_scorers_are_the_images_scorers"),)),
    Promise(IMAGES, "Every reward-service value the schema accepts is one the service starts with",
            "reward-service values schema ranges ↔ the image's start-up checks of its REWARD_* variables",
            guards=(Guard("schema", "each numeric range lies inside the image's, and `hardTimeoutSeconds` must exceed "
                          "math-verify's 1 s parse timeout; both ends of every range are rendered and started",
                          "tests/reward/test_reward_values_fit_image.py::test_schema_range_ends_start_the_service"),)),
    Promise(IMAGES, "The Ray head and every worker group run the same image", "Ray head ↔ Ray workers",
            (Check("GRPO701", "good-project-built-tags.yaml", "bad-embedded-pod-templates.yaml"),)),
    Promise(NODES, "Every pod's requests fit the instance types it may schedule on; EFA all or nothing",
            "pod requests ↔ instance catalogue ↔ nodeSelector",
            (Check("GRPO601", "good-full-node.yaml", "bad-partial-efa-and-oversized.yaml"),)),
    Promise(NODES, "The reward service, sandbox, fsx-utils, vLLM and lm-eval pods fit their own instance types",
            "`<component>.resources` / `vllm.tensorParallel` ↔ `<component>.instanceType`",
            (Check("GRPO601", "good-full-node.yaml", "bad-every-component-oversized.yaml"),)),
    Promise(NODES, "The GPU workers take whole nodes: every GPU and EFA interface of the instance type",
            "global.cluster.gpusPerNode / efaPerNode ↔ gpuInstanceType",
            (Check("GRPO613", "good-hyperpod-p5en.yaml", "bad-half-a-p5en.yaml"),)),
    Promise(NODES, "Evaluation takes no GPUs from the training release and never re-renders it",
            "vllm / lm-eval ↔ the training RayCluster's nodes",
            (Check("GRPO901", "good-eval-release.yaml", "bad-eval-in-training-release.yaml"),)),
    Promise(NODES, "The shared volume's free space holds the model, the retained checkpoints and the data",
            "global.storage.capacity − global.storage.used (unstated: the smallest FSx file system) ↔ model size × "
            "checkpoints kept", (Check("GRPO614", "good-keeps-three.yaml", "bad-keeps-too-many-checkpoints.yaml"),
                                 Check("GRPO614", "good-free-space-stated.yaml", "bad-filesystem-already-full.yaml"),
                                 Check("GRPO614", "good-free-space-stated.yaml", "bad-capacity-unstated.yaml"))),
    Promise(WIRING, "The job only calls components the values enable", "job reward/sandbox/eval ↔ components",
            (Check("GRPO102", "good-components-on.yaml", "bad-sandbox-disabled.yaml"),)),
    Promise(WIRING, "The reward service routes every data source the prepared data carries, and `code` routes have "
            "a sandbox", "reward-service.routes ↔ fsx-utils.data ↔ global.components.sandboxFusion",
            (Check("GRPO550", "good-code-route-with-sandbox.yaml", "bad-code-route-without-sandbox.yaml"),
             Check("GRPO550", "good-prepared-data-routed.yaml", "bad-prepared-data-unrouted.yaml"))),
    Promise(WIRING, "In-cluster URLs name the release's namespace and a Service it defines",
            "URLs in values/env/ConfigMaps ↔ Services ↔ namespace",
            (Check("GRPO101", "good-release-service.yaml", "bad-own-service-other-namespace.yaml"),)),
    Promise(WIRING, "Manifests applied together agree on one namespace", "every namespaced object of a release",
            (Check("GRPO850", "good-one-namespace.yaml", "bad-mixed-namespaces.yaml"),)),
    Promise(WIRING, "Selectors match the labels the pods' controllers set", "anti-affinity / NetworkPolicy / "
            "Service selectors ↔ KubeRay, JobSet, LeaderWorkerSet pod labels",
            (Check("GRPO401", "good-services-of-controller-pods.yaml", "bad-services-of-controller-pods.yaml"),)),
    Promise(WIRING, "A pod running model-written code is selected by a NetworkPolicy and holds no API token or "
            "writable checkpoint mount", "code-executing pod ↔ NetworkPolicy ↔ volumes",
            (Check("GRPO801", "good-foreign-code-runners.yaml", "bad-foreign-code-runners.yaml"),)),
)


def promises_markdown(rules: dict) -> list[str]:
    """The table of promises (markdown lines): each row's rules with their fixtures, its guards with their tests,
    or the gap."""
    out = ["## Cross-component promises", "",
           "Every place where one component's setting must agree with another's or with the hardware, and what keeps "
           "it: the rule that checks it, with its fixtures (under `tests/lint/rules/fixtures/<code>/`), or a guard "
           "with the test that proves it. A guard is **by schema** (no values key can express the mismatch), **by "
           "construction** (the chart or the builder derives both sides from one value) or **refused when run** (the "
           "tool or a gate in the pod refuses the mismatch before any work starts; `grpo-lint` does not see it). A "
           "**gap** row has neither: a misconfiguration there lints clean.", "",
           "| area | promise | between | rule or guard | good fixture | bad fixture |", "|---|---|---|---|---|---|"]
    for p in PROMISES:
        codes = list(dict.fromkeys(c.code for c in p.checks))  # a rule with several fixture pairs, named once
        names = [f"[{code}](#{code.lower()}-{rules[code].NAME}) {rules[code].NAME}" for code in codes]
        names += [f"{GUARD_KINDS[g.kind]}: {g.how} (`{g.test}`)" for g in p.guards]
        good = "<br>".join(f"`{c.code}/{c.good}`" for c in p.checks) or "—"
        bad = "<br>".join(f"`{c.code}/{c.bad}`" for c in p.checks) or "—"
        cell = "<br>".join(names) if names else f"**gap**: {p.gap}"
        out.append(f"| {p.area} | {p.promise} | {p.between} | {cell} | {good} | {bad} |")
    gaps = [p for p in PROMISES if not (p.checks or p.guards)]
    out += ["", f"Gaps ({len(gaps)}):", ""] + [f"- {p.promise} ({p.between}): {p.gap}." for p in gaps]
    return out
