"""Variants of the shipped values files for the scheduler oracle: instance types, node counts, GPU / EFA / CPU /
memory requests, reward and sandbox replicas and sizes, the sandbox's anti-affinity and dedicated nodes, and the
scheduling keys (`global.pod` and a component's `pod`: node selectors and required node affinity that agree or
disagree with the instance type, extra tolerations).

Seeded, so a run is reproducible and a disagreement can be replayed by its name. The draws lean on the edges the
catalogue gives (allocatable just below and above a request) so that about half the variants cross one."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grpo_stack.catalog.instances import lookup
from grpo_stack.localcluster.nodes import ZONE

ROOT = Path(__file__).resolve().parents[2]
TRAINING = ["values/qwen3-8b.yaml", "values/qwen3-30b.yaml", "values/qwen3-235b.yaml", "values/qwen25-72b.yaml",
            "values/miles-qwen3-4b.yaml", "values/miles-qwen3-30b-a3b.yaml"]
EVAL = "values/eval/eval.yaml"
GPU_TYPES = ["p4d.24xlarge", "p5.48xlarge", "p5e.48xlarge", "p5en.48xlarge", "p6-b200.48xlarge", "p6-b300.48xlarge",
             "g6e.48xlarge", "g5.48xlarge", "g6e.24xlarge", "g6.12xlarge"]
CPU_TYPES = ["m6i.4xlarge", "m6i.2xlarge", "m5.2xlarge", "m5.4xlarge", "m6i.8xlarge", "m5.xlarge", "m5.large"]
DEDICATED = {"nodeSelector": {"grpo-stack.io/pool": "sandbox"},
             "tolerations": [{"key": "grpo-stack.io/pool", "operator": "Equal", "value": "sandbox",
                              "effect": "NoSchedule"}]}


@dataclass
class Variant:
    name: str
    bases: list[str]  # shipped values files, in helm -f order
    overlay: dict[str, Any]

    def files(self, folder: Path) -> list[str]:
        import yaml

        path = folder / f"{self.name}.yaml"
        path.write_text(yaml.safe_dump(self.overlay, sort_keys=False))
        return [str(ROOT / b) for b in self.bases] + [str(path)]


def _pick(rng: random.Random, *weighted: tuple[float, Any]) -> Any:
    return rng.choices([v for _, v in weighted], [w for w, _ in weighted])[0]


def variants(count: int = 120, seed: int = 23) -> list[Variant]:
    rng = random.Random(seed)
    out = []
    for i in range(count):
        if i % 8 == 7:
            out.append(_eval_variant(rng, i))
        else:
            out.append(_training_variant(rng, i, TRAINING[i % len(TRAINING)]))
    return out


def _training_variant(rng: random.Random, i: int, base: str) -> Variant:
    gpu = rng.choice(GPU_TYPES)
    row = lookup(gpu)
    # The schema caps gpusPerNode at 8 and efaPerNode at 32: "too many" exists only below those caps.
    efa = _pick(rng, (0.8, row.efa), (0.1, min(32, row.efa * 2)), (0.1, max(1, row.efa // 2)))
    gpus = _pick(rng, (0.85, row.gpus), (0.15, 8 if row.gpus < 8 else 4))
    cpu_edge = row.allocatable_millicpu
    mem_edge = row.allocatable_memory_mib
    worker = {
        "cpu": _pick(rng, (0.7, f"{int(cpu_edge * 0.8) // 1000}"), (0.2, f"{cpu_edge - 10}m"),
                     (0.1, f"{cpu_edge // 1000 + 2}")),
        "memory": _pick(rng, (0.5, f"{int(mem_edge * 0.8 / 1024)}Gi"), (0.2, f"{mem_edge - 1}Mi"),
                        (0.1, f"{mem_edge + 1024}Mi"), (0.2, str(int(mem_edge * 0.7) * 2**20))),
    }
    head_type = rng.choice(CPU_TYPES)
    head_row = lookup(head_type)
    head = {"instanceType": head_type, "resources": {
        "cpu": _pick(rng, (0.6, "2"), (0.3, f"{head_row.allocatable_millicpu}m"),
                     (0.1, f"{head_row.allocatable_millicpu // 1000 + 1}")),
        "memory": _pick(rng, (0.7, "6Gi"), (0.2, f"{head_row.allocatable_memory_mib}Mi"),
                        (0.1, f"{head_row.allocatable_memory_mib // 1024 + 2}Gi"))}}
    overlay: dict[str, Any] = {
        "global": {"cluster": {"gpuInstanceType": gpu, "nodes": rng.randint(1, 4), "gpusPerNode": gpus,
                               "efaPerNode": efa}},
        "raycluster": {"head": head, "worker": {"resources": worker}},
        "fsx-utils": {"instanceType": rng.choice(CPU_TYPES[:5])},
    }
    text = (ROOT / base).read_text()
    if "rewardService: true" in text:
        rtype = rng.choice(CPU_TYPES[:5] * 3 + CPU_TYPES[5:])
        overlay["reward-service"] = {"replicas": rng.randint(1, 4), "instanceType": rtype,
                                     "resources": {"cpu": _pick(rng, (0.85, "3"), (0.15, "9")),
                                                   "memory": _pick(rng, (0.85, "6Gi"), (0.15, "40Gi"))}}
    if "sandboxFusion: true" in text:
        stype = rng.choice(CPU_TYPES[:5])
        srow = lookup(stype)
        sandbox: dict[str, Any] = {
            "replicas": rng.randint(1, 4), "instanceType": stype,
            "antiAffinity": rng.choice(["required", "preferred"]),
            "resources": {"cpu": _pick(rng, (0.7, "4"), (0.3, f"{srow.allocatable_millicpu // 1000 + 1}")),
                          "memory": _pick(rng, (0.8, "8Gi"), (0.2, f"{srow.allocatable_memory_mib + 512}Mi"))}}
        if rng.random() < 0.5:
            sandbox["dedicatedNodes"] = DEDICATED
        overlay["sandbox-fusion"] = sandbox
    _scheduling(random.Random(f"scheduling-{i}"), overlay, gpu)
    return Variant(f"v{i:03d}-{Path(base).stem}", [base], overlay)


def _scheduling(rng: random.Random, overlay: dict[str, Any], gpu: str) -> None:
    """The scheduling keys, drawn apart from the rest (their own seed) so the other draws stay as they were."""
    family = gpu.partition(".")[0]
    draw = rng.random()
    worker_pod = overlay["raycluster"]["worker"].setdefault("pod", {})
    if draw < 0.15:  # one zone for every pod: every node is in it
        overlay["global"]["pod"] = {"nodeSelector": {"topology.kubernetes.io/zone": ZONE}}
    elif draw < 0.25:  # the workers' own family, as a required affinity: agrees
        worker_pod["nodeAffinity"] = [{"key": "karpenter.k8s.aws/instance-family", "operator": "In",
                                       "values": [family, "p5"]}]
    elif draw < 0.32:  # every type but the workers' own: no node can take them
        worker_pod["nodeAffinity"] = [{"key": "node.kubernetes.io/instance-type", "operator": "NotIn",
                                       "values": [gpu]}]
    elif draw < 0.38:  # a generation no node of any catalogued type has, for every pod
        overlay["global"]["pod"] = {"nodeAffinity": [{"key": "karpenter.k8s.aws/instance-generation",
                                                      "operator": "Gt", "values": ["99"]}]}
    elif draw < 0.45:  # another family for the workers, by node selector
        other = "g5" if family != "g5" else "p4d"
        worker_pod["nodeSelector"] = {"karpenter.k8s.aws/instance-family": other}
    if rng.random() < 0.2:  # a toleration for a taint no node has: harmless
        worker_pod["tolerations"] = [{"key": "example.com/maintenance", "operator": "Exists",
                                      "effect": "NoSchedule"}]
    if not worker_pod:
        del overlay["raycluster"]["worker"]["pod"]


def _eval_variant(rng: random.Random, i: int) -> Variant:
    base = rng.choice(["values/qwen3-8b.yaml", "values/qwen3-30b.yaml"])
    vtype = rng.choice(["p5en.48xlarge", "p4d.24xlarge", "g6e.12xlarge", "p6-b200.48xlarge", "g6e.48xlarge"])
    overlay = {"vllm": {"instanceType": vtype, "tensorParallel": rng.choice([4, 8])},
               "lm-eval": {"instanceType": rng.choice(CPU_TYPES)}}
    return Variant(f"v{i:03d}-eval-{Path(base).stem}", [base, EVAL], overlay)
