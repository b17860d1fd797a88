"""No dead knob: for every shipped values file and every leaf key the schema allows there, another valid value
changes what a consumer sees, or the schema refuses the change with a reason.

Prevents the verl review's Batch 1 class ("config keys nothing reads"): keys accepted, lint clean, and read by
nothing (parallel sizes under FSDP, miles LoRA, the tracking Secret no template read).

Consumers: for `global.job.*` the built command (argv) or the Ray pods' env; for every other key the rendered
objects, without the job ConfigMap and the config-hash annotation (both change for any key and prove nothing).
Leaves are enumerated from the typed model (`grpo_stack.schema`), not from the file, so a key the file leaves
out (an optional knob, a whole optional section) is checked too. Exceptions are listed with their reason.
"""

from __future__ import annotations

import copy
import json
import types
import typing
from typing import Any

import pytest
from grpo_stack.job import BuildError, build
from grpo_stack.paths import CHART_DIR
from grpo_stack.render import RenderError, job_spec, merged_values, render
from grpo_stack.schema.components import SUBCHARTS, Global
from grpo_stack.schema.job import JOB_VARIANTS
from grpo_stack.values import schema_violations
from pydantic import BaseModel

from tests.conftest import VALUES_FILES, own_check_refuses, with_overrides

HASH = "grpo-stack.io/config-hash"
# Subchart section -> the component switch that installs it (raycluster is always installed).
COMPONENT = {"sandbox-fusion": "sandboxFusion", "reward-service": "rewardService", "fsx-utils": "fsxUtils",
             "vllm": "vllm", "lm-eval": "lmEval"}

# A valid example of each optional section, used when a file leaves the section out: its leaves are then varied
# from this example. test_every_optional_section_has_a_seed keeps the table complete.
SEEDS: dict[str, dict[str, Any]] = {
    "job.optim": {"lr": 2e-6, "warmupSteps": 10, "schedule": "cosine", "weightDecay": 0.05, "gradClip": 0.5},
    "job.kl": {"placement": "loss", "coef": 0.002, "estimator": "k2"},
    "job.clipRatio": {"low": 0.2, "high": 0.28},
    "job.resume": {"mode": "fromPath", "path": "checkpoints/run/global_step_10"},
    "job.lengths.responsePercentile": {"percentile": 95, "tokens": 2048},
    "job.validation": {"n": 4, "temperature": 0.6, "topP": 0.95},
    "job.lora": {"rank": 32, "alpha": 64, "targetModules": "all-linear"},
    "job.offload": {"params": True, "optimizer": True},
    "job.supervision": {"retries": 2},
    "job.deadline": {"end": "2027-01-04T11:30:00Z"},
    "job.fabricGate": {"dcgmLevel": 2, "maxMiB": 4096, "minBusBandwidthGBps": 200, "timeoutSeconds": 900},
    "job.supervision.stall": {"action": "resubmit", "factor": 4, "floorSeconds": 900, "startupSeconds": 7200,
                              "gpuIdleMinutes": 15, "gpuIdlePercent": 5},
    "job.supervision.events": {"enabled": True, "apiServerCidrs": ["10.0.16.0/20"], "apiServerPort": 443},
    "secrets.tracking": {"name": "wandb", "key": "WANDB_API_KEY"},
    "monitoring": {"labels": {"release": "kube-prometheus-stack"}, "interval": "30s",
                   "prometheusNamespace": "monitoring",
                   "alerts": {"rewardErrorRatio": 0.05, "stallFactor": 3, "stepTimeFloorSeconds": 300,
                              "gpuIdlePercent": 10, "gpuIdleMinutes": 15, "sandboxSaturationRatio": 0.1}},
    "monitoring.dcgmExporter": {"namespace": "gpu-operator", "selector": {"app": "nvidia-dcgm-exporter"},
                                "port": "gpu-metrics"},
    "network": {"egress": []},
}
# Optional sections that are an alternative to a key the file sets (exactly one of the two): not varied here.
ALTERNATIVES = {
    "global.job.model.shape": "the alternative to model.preset (exactly one of the two); read by grpo-lint's batch "
    "and storage rules, proved in tests/values/test_model_shape.py",
}
# Lists of objects: a valid list to set when the file has none.
LIST_SEEDS: dict[str, list] = {
    "global.job.extraEnv": [{"name": "MLFLOW_TRACKING_URI", "value": "http://mlflow.example:5000"}],
    "sandbox-fusion.dedicatedNodes.tolerations": [{"key": "grpo-stack/sandbox", "operator": "Exists",
                                                   "effect": "NoSchedule"}],
    "global.network.egress": [{"name": "shared-reward", "from": "ray", "to": {"namespace": "other-team",
                               "podLabels": {"app": "reward"}}, "ports": [{"port": 8000}],
                               "why": "the team's shared reward server"}],
}
# Maps other than job.verl.overrides, by path: one valid alternative each.
DICT_SEEDS: dict[str, list[dict]] = {
    "reward-service.routes": [{"openai/gsm8k": "exact_match"}],
    "fsx-utils.data.revisions": [{"apps": "a" * 40}],
    "global.monitoring.labels": [{"team": "rl"}],
    "global.monitoring.dcgmExporter.selector": [{"app.kubernetes.io/name": "dcgm-exporter"}],
    "sandbox-fusion.dedicatedNodes.nodeSelector": [{"node-group": "sandbox"}],
}
# Every pod's scheduling and identity (global.pod and each component's pod): one valid example of each map and list.
POD_SECTIONS = ("global.pod", "raycluster.head.pod", "raycluster.worker.pod",
                *(f"{section}.pod" for section in COMPONENT))
for _prefix in POD_SECTIONS:
    LIST_SEEDS[f"{_prefix}.nodeAffinity"] = [{"key": "topology.kubernetes.io/zone", "operator": "In",
                                               "values": ["us-west-2a"]}]
    LIST_SEEDS[f"{_prefix}.tolerations"] = [{"key": "team", "operator": "Equal", "value": "rl",
                                              "effect": "NoSchedule"}]
    DICT_SEEDS[f"{_prefix}.nodeSelector"] = [{"karpenter.sh/capacity-type": "on-demand"}]
    DICT_SEEDS[f"{_prefix}.annotations"] = [{"karpenter.sh/do-not-disrupt": "true"}]
    DICT_SEEDS[f"{_prefix}.labels"] = [{"cost-center": "rl"}]

# Leaves that may stay unread, each with the reason.
DISCRIMINATOR = ("the discriminator: another value selects another variant with other required keys, so a "
                 "one-key change is refused; every variant is a shipped file of its own")
EXCEPTIONS: dict[tuple[str, str], str] = {
    ("verl", "global.job.framework"): DISCRIMINATOR,
    ("verl", "global.job.backend"): DISCRIMINATOR,
    ("miles", "global.job.framework"): DISCRIMINATOR,
    ("miles", "global.job.backend"): DISCRIMINATOR,
    ("verl", "global.job.model.preset"): "describes the weights at model.path to grpo-lint's batch and parallelism "
    "rules (GRPO301-323 read its layers, heads and experts); verl reads the architecture from the weights",
    ("verl", "global.job.supervision.retries"): "read by the in-pod submit when it follows the run (how many times it "
    "resubmits a failed attempt, tests/recipes/test_supervised_submit.py); the command is the same for every attempt",
    ("miles", "global.job.supervision.retries"): "as for verl",
    ("verl", "global.job.deadline.end"): "read by the in-pod submit when the run starts: the end time it gives verl's "
    "legacy trainer in the Ray job's env and the moment it creates miles' save sentinel (tests/deadline/"
    "test_plan.py); the command is the same for any deadline (grpo_stack.deadline)",
    ("verl", "global.job.deadline.hours"): "as deadline.end",
    ("verl", "global.job.deadline.marginMinutes"): "trainer.esi_redundant_time under verl's legacy trainer "
    "(tests/deadline/test_plan.py); the shipped files run the v1 trainer, which has no deadline save (GRPO907)",
    ("verl", "global.job.deadline.checkpointWriteMinutes"): "as deadline.marginMinutes",
    ("miles", "global.job.deadline.end"): "as for verl",
    ("miles", "global.job.deadline.hours"): "as for verl",
    ("miles", "global.job.deadline.marginMinutes"): "read by the in-pod submit: when it creates miles' save sentinel "
    "(grpo_stack.deadline.miles_save_request_at, tests/deadline/test_plan.py)",
    ("miles", "global.job.deadline.checkpointWriteMinutes"): "as deadline.marginMinutes",
    ("miles", "global.job.deadline.stepMinutes"): "as deadline.marginMinutes",
    ("verl", "global.job.supervision.stepMetricsPort"): "read by the in-pod submit when it follows the run: the "
    "port it serves the step metrics on (tools/grpo_stack/job/supervised.py, scraped in tests/loop); the command is "
    "the same",
    ("miles", "global.job.supervision.stepMetricsPort"): "read by the in-pod submit; miles writes no step file, so "
    "only grpo_stall is served (docs/observability.md)",
}
for _leaf in ("dcgmLevel", "maxMiB", "minBusBandwidthGBps", "timeoutSeconds"):
    for _framework in ("verl", "miles"):
        EXCEPTIONS[(_framework, f"global.job.fabricGate.{_leaf}")] = (
            "read by the in-pod submit before it submits training: the gate's probe arguments and floor "
            "(grpo_stack.job.submit.fabric_gate, tests/recipes/test_fabric_gate_submit.py, tests/loop/"
            "test_fabric_gate.py); the command is the same")
for _leaf in ("apiServerCidrs", "apiServerPort"):
    for _framework in ("verl", "miles"):
        EXCEPTIONS[(_framework, f"global.job.supervision.events.{_leaf}")] = (
            "read by the chart, not the command: the Ray head's egress NetworkPolicy to the API server "
            "(tests/chart/test_network_flows.py, tests/cluster/test_monitoring_admission.py)")
for _leaf in ("action", "factor", "floorSeconds", "startupSeconds", "gpuIdleMinutes", "gpuIdlePercent"):
    EXCEPTIONS[("verl", f"global.job.supervision.stall.{_leaf}")] = (
        "read by the in-pod submit's stall detector while it follows the run (tools/grpo_stack/supervise/stall.py, "
        "tests/supervise/test_stall.py, tests/loop); the command is the same")
    EXCEPTIONS[("miles", f"global.job.supervision.stall.{_leaf}")] = (
        "read by the in-pod submit; miles writes no step file the detector could read (docs/observability.md)")
EXCEPTIONS |= {
    ("verl", "global.storage.capacity"): "the filesystem's size, an input of grpo-lint GRPO614 (checkpoints x "
    "retention + model + data must fit); no pod has anything to set from it",
    ("miles", "global.storage.capacity"): "as for verl",
    ("verl", "global.storage.used"): "what the filesystem already holds, an input of grpo-lint GRPO614 (subtracted "
    "from global.storage.capacity); no pod has anything to set from it",
    ("miles", "global.storage.used"): "as for verl",
    ("verl", "global.eval.checkpointStep"): "read by the evaluation release (values/eval/eval.yaml on top: vLLM "
    "serves that step, the provenance gate checks it); the training release renders no evaluation component "
    "(GRPO901), so nothing there reads it",
    ("miles", "global.eval.checkpointStep"): "as for verl",
    ("verl", "global.job.lengths.meanPrompt"): "an input of grpo-lint's memory model (GRPO920: packed micro "
    "batches follow the data's real lengths, tests/memory/test_packing.py); the framework measures lengths itself",
    ("verl", "global.job.lengths.meanResponse"): "as meanPrompt",
    ("miles", "global.job.lengths.meanPrompt"): "as for verl",
    ("miles", "global.job.lengths.meanResponse"): "as for verl",
}
for _leaf in ("percentile", "tokens"):
    EXCEPTIONS[("verl", f"global.job.lengths.responsePercentile.{_leaf}")] = (
        "an input of grpo-lint's memory model (GRPO920: a packed micro batch's long tail, "
        "tests/memory/test_packing.py); the framework measures lengths itself")
    EXCEPTIONS[("miles", f"global.job.lengths.responsePercentile.{_leaf}")] = "as for verl"
EXCEPTIONS |= {
    ("verl", "raycluster.image.build"): "declares the framework build of an image under another tag or pinned by "
    "digest alone, an input of grpo-lint GRPO330 (tests/lint/rules/fixtures/GRPO330); the pods run the image "
    "reference, which the build does not change",
    ("miles", "raycluster.image.build"): "as for verl",
    ("verl", "global.instanceTypes"): "capacity of instance types the catalogue lacks, an input of grpo-lint "
    "GRPO601/GRPO613 (tests/lint/test_instance_capacity_in_values.py), as `.grpo-lint.yaml` instance-types is; "
    "the nodes' capacity is the cloud's, no pod has anything to set from it",
    ("miles", "global.instanceTypes"): "as for verl",
    ("verl", "global.monitoring.prometheusNamespace"): "admits that namespace to the vLLM server's port, which an "
    "evaluation release renders (values/eval/eval.yaml on top; tests/chart/test_network_flows.py); a training "
    "release has no vLLM server",
    ("miles", "global.monitoring.prometheusNamespace"): "as for verl",
    ("verl", "global.run.ttlSecondsAfterFinished"): "read in job mode (global.run.mode: job) alone: the RayJob's "
    "ttlSecondsAfterFinished (tests/chart/test_job_mode.py); the shipped files run cluster mode, whose RayCluster "
    "has no end",
    ("miles", "global.run.ttlSecondsAfterFinished"): "as for verl",
    ("verl", "global.run.operatorNamespace"): "read in job mode alone: the namespace the Ray dashboard port admits "
    "the KubeRay operator from (tests/chart/test_job_mode.py); in cluster mode the operator never calls the pods",
    ("miles", "global.run.operatorNamespace"): "as for verl",
    ("verl", "global.run.kuberayVersion"): "the KubeRay release the cluster runs, an input of grpo-lint GRPO352 "
    "(tests/lint/rules/fixtures/GRPO352); the chart renders the same objects for every release",
    ("miles", "global.run.kuberayVersion"): "as for verl",
}


def _set_dynamic(values: dict, on: bool) -> dict:
    batch = values["global"]["job"]["verl"]["batch"]
    for key in ("ppoMaxTokenLenPerGpu", "ppoMicroBatchSizePerGpu", "logProbMicroBatchSizePerGpu"):
        batch.pop(key, None)
    batch.update({"ppoMaxTokenLenPerGpu": 16384} if on else {"ppoMicroBatchSizePerGpu": 2,
                                                            "logProbMicroBatchSizePerGpu": 4})
    return values


def _set_colocate(values: dict, on: bool) -> dict:
    miles = values["global"]["job"]["miles"]
    miles.pop("actorNodes", None)
    if not on:
        miles["actorNodes"] = 1
    return values


def _set_privileged(values: dict, on: bool) -> dict:
    if on:  # privileged needs a dedicated node group (schema: _PRIVILEGED_NEEDS_DEDICATED_NODES)
        values.setdefault("sandbox-fusion", {})["dedicatedNodes"] = {
            "nodeSelector": {"node-group": "sandbox"},
            "tolerations": LIST_SEEDS["sandbox-fusion.dedicatedNodes.tolerations"]}
    return values


# A switch whose other value needs its dependent keys changed with it (the schema requires / refuses them).
COMPANIONS = {
    "sandbox-fusion.privileged": _set_privileged,
    "global.job.verl.batch.useDynamicBsz": _set_dynamic,
    "global.job.miles.colocate": _set_colocate,
}


def _reasons() -> set[str]:
    """Every one-line reason the generated schema gives for refusing a key (x-grpo-reason)."""
    out: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("x-grpo-reason"), str):
                out.add(node["x-grpo-reason"].split(": ", 1)[-1])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(json.loads((CHART_DIR / "values.schema.json").read_text()))
    return out


REASONS = _reasons()


def _unwrap(annotation: Any) -> tuple[Any, bool]:
    """(inner annotation, optional) for X | None / Annotated[X, ...]."""
    optional = False
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
        elif origin in (typing.Union, types.UnionType):
            args = [a for a in typing.get_args(annotation) if a is not type(None)]
            optional = optional or len(args) < len(typing.get_args(annotation))
            if len(args) != 1:
                return annotation, optional
            annotation = args[0]
        else:
            return annotation, optional


def _model(annotation: Any) -> type[BaseModel] | None:
    inner, _ = _unwrap(annotation)
    return inner if isinstance(inner, type) and issubclass(inner, BaseModel) else None


def _get(values: dict, dotted: str) -> Any:
    node: Any = values
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def leaves(model: type[BaseModel], prefix: str, values: dict, seeded: dict[str, Any]) -> list[tuple[str, Any]]:
    """(dotted path, annotation) of every leaf `model` allows; optional sections the values lack get a seed."""
    out = []
    for name, field in model.model_fields.items():
        path = f"{prefix}.{name}"
        sub = _model(field.annotation)
        if sub is None:
            out.append((path, field.annotation))
            continue
        if path in ALTERNATIVES and _get(values, path) is None:
            continue
        if _get(values, path) is None and not field.is_required():
            key = path.removeprefix("global.")
            assert key in SEEDS, f"{path}: optional section without a seed in SEEDS"
            seeded[path] = copy.deepcopy(SEEDS[key])
        out += leaves(sub, path, with_overrides(values, seeded), seeded)
    return out


def candidates(annotation: Any, current: Any, path: str = "") -> list[Any]:
    """Other values of the leaf's type, nearest first; the schema decides which are valid."""
    inner, _ = _unwrap(annotation)
    origin = typing.get_origin(inner)
    if origin is list and _model(typing.get_args(inner)[0]) is not None:
        assert path in LIST_SEEDS, f"{path}: list of objects without an example in LIST_SEEDS"
        return [c for c in (LIST_SEEDS[path], [*(current or []), *LIST_SEEDS[path]]) if c != current]
    if origin is typing.Literal:
        return [c for c in typing.get_args(inner) if c != current]
    if origin is typing.Union or origin is types.UnionType:  # Literal[...] | None handled above; plain unions
        return []
    if inner is bool:
        return [not current] if current is not None else [True, False]
    if inner is int:
        base = current if isinstance(current, int) else 1
        return [c for c in dict.fromkeys([base + 1, base - 1, base * 2, base // 2, 1, 2, 8, 42]) if c != current]
    if inner is float:
        base = current if isinstance(current, int | float) else 0.5
        return [c for c in dict.fromkeys([base * 0.5, base + 0.05, base * 1.5, 0.5, 0.01, 1.0]) if c != current]
    if inner is str:
        base = current if isinstance(current, str) else "x"
        return [c for c in (f"1{base}", f"{base}x", f"{base}1", f"x{base}", "x", "http://example.com/x",
                            f"sha256:{'a' * 64}", "a" * 40, "gsm8k", "math:2", "org/model") if c != current]
    if origin is dict and path in DICT_SEEDS:
        return [c for c in DICT_SEEDS[path] if c != current]
    if origin is dict:  # job.verl.overrides: a verl config key no typed key owns
        return [{"trainer.val_before_train": False}, {"actor_rollout_ref.rollout.enforce_eager": True}]
    if origin is list:
        item = typing.get_args(inner)[0]
        cur = list(current or [])
        out: list[Any] = []
        if len(cur) > 1:
            out.append(cur[:-1])
        for alt in candidates(item, cur[-1] if cur else None):
            out.append([*cur, alt])
            out.append([alt, *cur[1:]])
        return [c for c in out if c != cur]
    raise AssertionError(f"no candidates for {inner!r}")


def ray_env(rendered) -> list:
    ray = next(o for o in rendered.objects if o.kind == "RayCluster").obj["spec"]
    pods = [ray["headGroupSpec"]["template"]["spec"]] + [g["template"]["spec"] for g in ray["workerGroupSpecs"]]
    return [[c.get("env") for c in p["containers"]] for p in pods]


def objects(rendered) -> list:
    """The rendered objects, and the release notes a user reads after `helm install` (NOTES prints the staging
    commands that fsx-utils.model / fsx-utils.data feed)."""
    out: list = [{"NOTES.txt": rendered.notes}]
    for o in rendered.objects:
        if o.kind == "ConfigMap" and "job.json" in (o.obj.get("data") or {}):
            continue
        obj = json.loads(json.dumps(o.obj).replace(HASH, "x-hash"))  # annotation key renamed, value dropped below
        out.append(_drop_hash(obj))
    return out


def _drop_hash(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _drop_hash(v) for k, v in node.items() if k != "x-hash"}
    if isinstance(node, list):
        return [_drop_hash(v) for v in node]
    return node


def argv(spec: dict) -> tuple:
    try:
        built = build(spec)
        return (*built.argv(), *built.notes)  # notes: the model-arguments script the miles recipe sources
    except BuildError as exc:  # the builder refusing the value is something the user sees
        return ("refused", str(exc))


class View:
    """What consumers see for one values dict, computed lazily."""

    def __init__(self, values: dict):
        self.values = values
        self._rendered = None

    @property
    def rendered(self):
        if self._rendered is None:
            # Helm's own schema check (most of a render) only where grpo-lint's, which refuses everything Helm's
            # does (tests/render/test_helm_schema_agreement.py), finds something: the verdicts are the same.
            self._rendered = render(self.values, release="grpo", namespace="grpo",
                                    helm_schema=own_check_refuses(self.values))
        return self._rendered

    def argv_fast(self, base_spec: dict) -> tuple:
        """The command from the base file's rendered job spec with this `global.job`: the chart copies
        global.job into the spec verbatim, so this equals rendering (endpoints aside, which reward.* renders)."""
        spec = copy.deepcopy(base_spec)
        spec["job"] = copy.deepcopy(self.values["global"]["job"])
        return argv(spec)

    def job(self) -> tuple:
        return argv(job_spec(self.rendered)), ray_env(self.rendered)

    def objects(self) -> list:
        return objects(self.rendered)


def refusal(values: dict) -> list[str] | None:
    """Schema messages when the values are invalid, else None."""
    try:
        found = schema_violations(merged_values(values))
    except Exception as exc:  # noqa: BLE001 - Helm refusing to merge is a refusal too
        return [str(exc)]
    return [v.message for v in found] or None


# Settings whose only consumer exists when another component is installed, with that component's switch: the
# reward service's sandbox client is started only for code routes, which need SandboxFusion (GRPO550).
GATED_BY_COMPONENT = {"reward-service.sandbox.": "sandboxFusion"}


def _gated_off(path: str, components: dict, defaults: dict) -> bool:
    return any(path.startswith(prefix) and not components.get(switch, defaults["global"]["components"][switch])
               for prefix, switch in GATED_BY_COMPONENT.items())


def all_leaves(values: dict) -> tuple[list[tuple[str, Any]], dict[str, Any]]:
    job = values["global"]["job"]
    seeded: dict[str, Any] = {}
    out = leaves(JOB_VARIANTS[(job["framework"], job["backend"])], "global.job", values, seeded)
    for name, field in Global.model_fields.items():
        if name == "job":
            continue
        sub = _model(field.annotation)
        if sub is not None and _get(values, f"global.{name}") is None and not field.is_required():
            assert name in SEEDS, f"global.{name}: optional section without a seed in SEEDS"
            seeded[f"global.{name}"] = copy.deepcopy(SEEDS[name])
        out += [(f"global.{name}", field.annotation)] if sub is None else leaves(
            sub, f"global.{name}", with_overrides(values, seeded), seeded)
    components = values["global"].get("components") or {}
    defaults = merged_values(values)
    for section, model in SUBCHARTS.items():
        if section != "raycluster" and not components.get(COMPONENT[section], defaults["global"]["components"][
                COMPONENT[section]]):
            continue  # not installed: grpo-lint GRPO611 reports any key set there (the schema cannot: see the rule)
        out += [(path, ann) for path, ann in leaves(model, section, defaults, seeded)
                if not _gated_off(path, components, defaults)]
    return out, seeded


def _cases():
    from grpo_stack.values import load_values_file

    for path in VALUES_FILES:
        yield pytest.param(path.stem, load_values_file(path).data, id=path.stem)


@pytest.mark.parametrize(("name", "values"), list(_cases()))
def test_every_leaf_reaches_a_consumer(name, values):
    framework = values["global"]["job"]["framework"]
    found, seeded = all_leaves(values)
    assert found, "no leaves enumerated"
    base_values = with_overrides(values, seeded)
    assert refusal(base_values) is None, f"the seeded file is invalid: {refusal(base_values)}"
    base = View(base_values)
    base_spec = job_spec(base.rendered)
    merged = merged_values(base_values)
    dead = []
    for path, annotation in found:
        if (framework, path) in EXCEPTIONS:
            continue
        current = _get(merged, path)
        valid, refused_with_reason = 0, False
        changed = False
        others = candidates(annotation, current, path)
        if not others:
            continue  # a single-value Literal: there is no other value to set
        for candidate in others:
            changed_values = with_overrides(base_values, {path: candidate})
            if path in COMPANIONS:
                changed_values = COMPANIONS[path](changed_values, candidate)
            problems = refusal(changed_values)
            if problems:
                refused_with_reason |= any(p in REASONS for p in problems)
                continue
            valid += 1
            view = View(changed_values)
            if path.startswith("global.job.") and not path.startswith("global.job.reward."):
                if view.argv_fast(base_spec) != base.argv_fast(base_spec):
                    changed = True
                    break
                changed = view.job() != base.job()
            elif path.startswith("global.job."):
                changed = view.job() != base.job()
            else:
                try:
                    changed = view.objects() != base.objects()
                except RenderError:
                    changed = True  # Helm refusing the value is what the user sees
            if changed or valid >= 3:
                break
        if changed or (valid == 0 and refused_with_reason):
            continue
        dead.append(f"{path} (current {current!r}; {valid} valid alternatives changed nothing"
                    + ("" if valid else ", and none was valid: add a candidate") + ")")
    assert not dead, f"{name}: keys that reach no consumer:\n  " + "\n  ".join(dead)


def test_every_optional_section_has_a_seed():
    """A new optional section must come with an example in SEEDS, or the test above would not vary it."""
    for (framework, backend), model in JOB_VARIANTS.items():
        values = {"global": {"job": {"framework": framework, "backend": backend}}}
        leaves(model, "global.job", values, {})  # asserts on a missing seed


def test_exceptions_name_real_keys():
    """An exception for a key that no longer exists would hide nothing and mislead."""
    for (framework, path), reason in EXCEPTIONS.items():
        assert reason
        model = next(m for (f, _), m in JOB_VARIANTS.items() if f == framework)
        names = [p for p, _ in leaves(model, "global.job", {"global": {"job": {}}}, {})]
        for name, field in Global.model_fields.items():
            if name != "job" and _model(field.annotation) is None:
                names.append(f"global.{name}")  # a leaf of global itself (imageRegistry, instanceTypes)
            elif name != "job":
                names += [p for p, _ in leaves(_model(field.annotation), f"global.{name}", {"global": {}},
                                               {"global.secrets.tracking": SEEDS["secrets.tracking"]})]
        defaults = merged_values({"global": {"job": {"framework": framework}}})
        for section, sub in SUBCHARTS.items():
            names += [p for p, _ in leaves(sub, section, defaults, {})]
        assert path in names, path
