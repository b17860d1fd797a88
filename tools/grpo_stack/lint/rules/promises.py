"""Every place where one component's setting must agree with another's or with the hardware, and the rule that
checks it (rendered into docs/rules.md by docs.py; tests/lint/test_promises.py checks every row's rule is
registered and its fixtures exist). A row without a rule is a gap, listed as such: a misconfiguration there lints
clean today.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Check:
    code: str
    good: str  # fixture file under tests/lint/rules/fixtures/<code>/
    bad: str


@dataclass(frozen=True)
class Promise:
    area: str
    promise: str
    between: str
    checks: tuple[Check, ...] = ()
    gap: str = ""  # for a row no rule checks yet: what a rule would have to compare


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
    Promise(WAITS, "A utility pod others wait on is Ready only after its set-up", "fsx-utils ↔ whoever waits "
            "for it", (Check("GRPO849", "good-utility-pod.yaml", "bad-utility-pod.yaml"),)),
    Promise(WAITS, "A readiness or startup probe checks the service it gates", "probe ↔ the server in the pod",
            (Check("GRPO844", "good-probes.yaml", "bad-probes.yaml"),)),
    Promise(SERVED, "The eval server's context holds what training generates and what lm-eval asks for",
            "vllm.maxModelLen ↔ job lengths ↔ lm-eval.maxLength",
            (Check("GRPO502", "good-covers-training.yaml", "bad-short-eval-context.yaml"),)),
    Promise(SERVED, "The eval server serves the checkpoint the job trains", "vllm.modelPath ↔ job checkpoint "
            "directory", gap="no rule compares vllm.modelPath with the trainer's checkpoint/export path"),
    Promise(SERVED, "The rollout engine's context fits the model and holds prompt + response",
            "rollout max_model_len ↔ model config ↔ job lengths",
            (Check("GRPO313", "good-max-model-len.yaml", "bad-max-model-len-truncates.yaml"),)),
    Promise(SERVED, "The LoRA rank trained is one vLLM serves", "job LoRA rank ↔ vLLM max_lora_rank list",
            (Check("GRPO305", "good-lora-rank-served.yaml", "bad-lora-rank-rounded-up.yaml"),)),
    Promise(PARALLEL, "Training GPUs split into whole tp × pp × cp replicas", "trainer parallelism ↔ GPU count",
            (Check("GRPO301", "good-tp-divides-gpus.yaml", "bad-tp-does-not-divide-gpus.yaml"),)),
    Promise(PARALLEL, "Training (Megatron) parallelism fits the model: heads ÷ tp, layers ÷ pp (and vpp), "
            "experts ÷ ep, sequence ÷ 2·cp", "trainer tp/pp/ep/cp ↔ model config",
            (Check("GRPO315", "good-heads-tp.yaml", "bad-heads-tp.yaml"),
             Check("GRPO316", "good-layers-pp.yaml", "bad-layers-pp.yaml"),
             Check("GRPO317", "good-experts-ep.yaml", "bad-experts-ep.yaml"),
             Check("GRPO323", "good-cp4.yaml", "bad-cp3.yaml"))),
    Promise(PARALLEL, "Training (FSDP Ulysses) sequence parallelism fits the heads and the GPUs",
            "trainer ulysses sp ↔ model heads ↔ GPU count",
            (Check("GRPO314", "good-ulysses-heads.yaml", "bad-ulysses-heads.yaml"),)),
    Promise(PARALLEL, "Rollout engine tensor parallelism fits the model's heads", "rollout tp ↔ model config",
            (Check("GRPO319", "good-rollout-heads.yaml", "bad-rollout-heads.yaml"),)),
    Promise(PARALLEL, "Rollout engines tile the GPUs and fill whole nodes", "rollout tp / placement ↔ GPUs per node",
            (Check("GRPO312", "good-rollout-tp.yaml", "bad-rollout-replica-straddles-nodes.yaml"),
             Check("GRPO322", "good-split-placement.yaml", "bad-engine-larger-than-rollout-gpus.yaml"))),
    Promise(PARALLEL, "The eval server's tensor parallelism fits the served model's heads and its pod's GPUs",
            "vllm.tensorParallel ↔ served model config ↔ vllm pod GPU limit",
            gap="no rule checks the eval vLLM server's tensor parallel size against the served model's heads"),
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
    Promise(WORKERS, "The reward service runs one scoring worker per CPU its pod requests",
            "reward-service.workers ↔ reward-service.resources.cpu",
            gap="no rule compares reward-service.workers with the pod's CPU request"),
    Promise(IMAGES, "The framework image carries the framework version the values declare",
            "values framework version ↔ image tag / contents",
            gap="GRPO330 (framework image, values-format work) will check this once merged"),
    Promise(IMAGES, "The Ray head and every worker group run the same image", "Ray head ↔ Ray workers",
            (Check("GRPO701", "good-project-built-tags.yaml", "bad-embedded-pod-templates.yaml"),)),
    Promise(NODES, "Every pod's requests fit the instance types it may schedule on; EFA all or nothing",
            "pod requests ↔ instance catalogue ↔ nodeSelector",
            (Check("GRPO601", "good-full-node.yaml", "bad-partial-efa-and-oversized.yaml"),)),
    Promise(WIRING, "The job only calls components the values enable", "job reward/sandbox/eval ↔ components",
            (Check("GRPO102", "good-components-on.yaml", "bad-sandbox-disabled.yaml"),)),
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
    """The table of promises (markdown lines): each row's rules with their fixtures, or the gap."""
    out = ["## Cross-component promises", "",
           "Every place where one component's setting must agree with another's or with the hardware, and the rule "
           "that checks it, with its fixtures (under `tests/lint/rules/fixtures/<code>/`). A **gap** row has no "
           "rule yet: a misconfiguration there lints clean.", "",
           "| area | promise | between | rule | good fixture | bad fixture |", "|---|---|---|---|---|---|"]
    for p in PROMISES:
        if p.checks:
            names = "<br>".join(f"[{c.code}](#{c.code.lower()}-{rules[c.code].NAME}) {rules[c.code].NAME}"
                                for c in p.checks)
            good = "<br>".join(f"`{c.code}/{c.good}`" for c in p.checks)
            bad = "<br>".join(f"`{c.code}/{c.bad}`" for c in p.checks)
        else:
            names, good, bad = f"**gap**: {p.gap}", "—", "—"
        out.append(f"| {p.area} | {p.promise} | {p.between} | {names} | {good} | {bad} |")
    gaps = [p for p in PROMISES if not p.checks]
    out += ["", f"Gaps ({len(gaps)}):", ""] + [f"- {p.promise} ({p.between}): {p.gap}." for p in gaps]
    return out
