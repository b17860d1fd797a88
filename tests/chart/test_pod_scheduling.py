"""Scheduling and identity keys (global.pod, each component's `pod`, global.imageRegistry, global.imagePullSecrets)
as a user meets them: on every pod the chart renders, merged with the chart's own settings, and refused by the
schema where they would break a selector.

Consumers: Helm's own engine (grpo-render, helm_python) renders the objects; the real Helm CLI validates the values
against values.schema.json (test_helm_refuses_a_selector_label). The rendered pod specs are checked against the
Kubernetes API's object schema by grpo-lint (GRPO002, test_lint_is_clean_with_every_key); whether the scheduler
then places them on a node with those labels needs a cluster and is not checked here.
"""

from __future__ import annotations

import subprocess

import pytest
import yaml
from grpo_stack.lint.engine import lint_values
from grpo_stack.paths import CHART_DIR, VALUES_DIR
from grpo_stack.render import merged_values
from grpo_stack.values import schema_violations

from tests.chart.test_behaviours import pod_templates
from tests.conftest import NAMESPACE, RELEASE, with_overrides

SANDBOX = "qwen3-235b"  # enables sandbox-fusion, vllm and lm-eval (and their helm test hooks)
REWARD = "qwen3-30b"  # enables reward-service
REGISTRY = "123456789012.dkr.ecr.us-west-2.amazonaws.com"
ZONE = {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["us-west-2a"]}
TEAM_TAINT = {"key": "team", "operator": "Equal", "value": "rl", "effect": "NoSchedule"}
GPU_TAINT = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
EVERY_POD = {
    "global.pod": {"nodeSelector": {"karpenter.sh/capacity-type": "on-demand"}, "nodeAffinity": [ZONE],
                   "tolerations": [TEAM_TAINT], "annotations": {"karpenter.sh/do-not-disrupt": "true"},
                   "labels": {"cost-center": "rl"}, "priorityClassName": "training"},
    "global.imageRegistry": REGISTRY,
    "global.imagePullSecrets": ["ecr-pull"],
}
# An eval release on top of the 235B values renders vllm and lm-eval; the training release the rest.
EVAL = {"global.components.raycluster": False, "global.components.sandboxFusion": False,
        "global.components.fsxUtils": False, "global.components.vllm": True, "global.components.lmEval": True}


def _pods(rendered) -> list[tuple[str, dict, dict]]:
    """(component label, template metadata, pod spec) of every pod the release creates."""
    return [((meta.get("labels") or {}).get("app.kubernetes.io/component", "?"), meta, spec)
            for o in rendered.objects for meta, spec in pod_templates(o.obj)]


def _every_pod(render_values, overrides: dict) -> list[tuple[str, dict, dict]]:
    pods = []
    for name, extra in ((SANDBOX, {}), (SANDBOX, EVAL), (REWARD, {})):
        pods += _pods(render_values(name, {**overrides, **extra}))
    return pods


def test_every_pod_gets_the_global_settings(render_values):
    pods = _every_pod(render_values, EVERY_POD)
    components = {c for c, _, _ in pods}
    assert {"ray-head", "ray-worker", "sandbox-fusion", "sandbox-fusion-test", "reward-service",
            "reward-service-test", "fsx-utils", "vllm", "vllm-test", "lm-eval"} <= components, components
    for component, meta, spec in pods:
        assert spec["nodeSelector"]["karpenter.sh/capacity-type"] == "on-demand", component
        assert TEAM_TAINT in spec["tolerations"], component
        terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        assert terms == {"nodeSelectorTerms": [{"matchExpressions": [ZONE]}]}, component
        assert spec["priorityClassName"] == "training", component
        assert spec["imagePullSecrets"] == [{"name": "ecr-pull"}], component
        assert meta["labels"]["cost-center"] == "rl", component
        assert meta["annotations"]["karpenter.sh/do-not-disrupt"] == "true", component
        for c in spec.get("initContainers", []) + spec["containers"]:
            assert c["image"].startswith(f"{REGISTRY}/"), (component, c["image"])


def test_the_charts_own_settings_stay(render_values):
    """The instance type, the GPU taint toleration, the sandbox's anti-affinity and the chart's labels are kept
    beside what the values add."""
    for component, meta, spec in _every_pod(render_values, EVERY_POD):
        if not component.endswith("-test"):
            assert spec["nodeSelector"].get("node.kubernetes.io/instance-type"), component
        assert meta["labels"]["app.kubernetes.io/component"] == component
        if component in ("ray-worker", "vllm"):
            assert GPU_TAINT in spec["tolerations"], component
        if component == "sandbox-fusion":
            assert spec["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            assert meta["annotations"]["instrumentation.opentelemetry.io/inject-python"] == "false"
        if component.startswith("ray-"):
            assert "grpo-stack.io/config-hash" in meta["annotations"]


def test_a_token_only_where_an_identity_is_asked_for(render_values):
    pods = _pods(render_values(REWARD, {"raycluster.worker.pod.serviceAccountName": "trainer"}))
    by_component = {c: spec for c, _, spec in pods}
    assert by_component["ray-worker"]["serviceAccountName"] == "trainer"
    assert by_component["ray-worker"]["automountServiceAccountToken"] is True
    for component, _, spec in pods:
        if component != "ray-worker":
            assert "serviceAccountName" not in spec, component
            assert spec["automountServiceAccountToken"] is False, component


def test_component_settings_add_to_global_ones(render_values):
    pods = _pods(render_values(REWARD, {
        **EVERY_POD,
        "raycluster.worker.pod": {"nodeSelector": {"karpenter.k8s.aws/instance-family": "p5en"},
                                  "tolerations": [{"key": "gpu-pool", "operator": "Exists", "effect": "NoSchedule"}],
                                  "labels": {"role": "trainer"}, "priorityClassName": "gpu-high"}}))
    meta, worker = next((m, s) for c, m, s in pods if c == "ray-worker")
    head = next(s for c, _, s in pods if c == "ray-head")
    assert worker["nodeSelector"] == {"node.kubernetes.io/instance-type": "p5en.48xlarge",
                                      "karpenter.sh/capacity-type": "on-demand",
                                      "karpenter.k8s.aws/instance-family": "p5en"}
    assert worker["tolerations"] == [GPU_TAINT, TEAM_TAINT, {"key": "gpu-pool", "operator": "Exists",
                                                             "effect": "NoSchedule"}]
    assert worker["priorityClassName"] == "gpu-high"  # the component's scalar wins
    assert head["priorityClassName"] == "training"
    assert {"cost-center": "rl", "role": "trainer"}.items() <= meta["labels"].items()


def test_the_registry_replaces_a_named_one(render_values):
    rendered = render_values(REWARD, {"global.imageRegistry": "registry.local:5000/mirror",
                                      "reward-service.image.repository": "public.ecr.aws/acme/reward"})
    images = {c["image"] for o in rendered.objects for _, spec in pod_templates(o.obj) for c in spec["containers"]}
    assert any(i.startswith("registry.local:5000/mirror/acme/reward:") for i in images), images
    assert all(i.startswith("registry.local:5000/mirror/") for i in images), images


def test_pod_metadata_changes_recreate_the_ray_pods(render_values):
    """KubeRay recreates the Ray pods when the config hash changes; a new annotation must reach running pods."""
    def config_hash(overrides):
        ray = next(o for o in render_values(REWARD, overrides).objects if o.kind == "RayCluster").obj
        return ray["spec"]["headGroupSpec"]["template"]["metadata"]["annotations"]["grpo-stack.io/config-hash"]
    assert config_hash({}) != config_hash({"raycluster.head.pod.annotations": {"karpenter.sh/do-not-disrupt": "true"}})


@pytest.mark.parametrize(("key", "value", "reason"), [
    ("global.pod.labels", {"app.kubernetes.io/name": "x"}, "the chart sets this label itself"),
    ("raycluster.worker.pod.labels", {"ray.io/node-type": "head"}, "the chart sets this label itself"),
    ("sandbox-fusion.pod.nodeSelector", {"node.kubernetes.io/instance-type": "m6i.large"},
     "is the component's instanceType key"),
])
def test_schema_refuses_what_would_break_a_selector(shipped_values, key, value, reason):
    found = schema_violations(merged_values(with_overrides(shipped_values[SANDBOX], {key: value})))
    assert any(reason in v.message for v in found), [v.message for v in found]


def test_helm_refuses_a_selector_label(helm_bin, helm_env):
    proc = subprocess.run(
        [str(helm_bin), "template", RELEASE, str(CHART_DIR), "-n", NAMESPACE, "-f", str(VALUES_DIR / f"{REWARD}.yaml"),
         "--set", "global.pod.labels.app\\.kubernetes\\.io/instance=other"],
        capture_output=True, text=True, env=helm_env, timeout=120, check=False)
    assert proc.returncode != 0, proc.stdout[-500:]
    assert "invalid propertyName 'app.kubernetes.io/instance'" in proc.stderr, proc.stderr[-2000:]


def test_lint_is_clean_with_every_key(tmp_path):
    """Every key set at once on the ordinary run: no object-schema finding (GRPO002) and no other finding."""
    overlay = tmp_path / "scheduling.yaml"
    overlay.write_text(yaml.safe_dump(with_overrides({}, {
        **EVERY_POD, "raycluster.head.pod.serviceAccountName": "trainer",
        "raycluster.worker.pod.serviceAccountName": "trainer"})))
    result = lint_values([str(VALUES_DIR / f"{REWARD}.yaml"), str(overlay)], release=RELEASE, namespace=NAMESPACE)
    assert not result.input_errors, [str(e) for e in result.input_errors]
    assert not result.findings, [f"{f.code} {f.key_path}: {f.message}" for f in result.findings]


def test_a_mirror_is_the_same_evaluation(render_values):
    """lm-eval's Job and results directory are named by what it measures: pulling the same image through a
    registry mirror measures the same thing, so neither changes."""
    def job(overrides):
        rendered = render_values(SANDBOX, {**EVAL, **overrides})
        (o,) = [o for o in rendered.objects if o.kind == "Job"]
        return o.name, o.obj["metadata"]["annotations"]["grpo-stack/results"]
    assert job({"global.imageRegistry": REGISTRY}) == job({})


def test_lint_names_the_refused_label(tmp_path):
    """grpo-lint reports a selector label in values as an input error at its file, line and key path."""
    overlay = tmp_path / "labels.yaml"
    overlay.write_text("global:\n  pod:\n    labels:\n      app.kubernetes.io/name: mine\n")
    result = lint_values([str(VALUES_DIR / f"{REWARD}.yaml"), str(overlay)], release=RELEASE, namespace=NAMESPACE)
    shown = [str(e) for e in result.input_errors]
    assert any(s.startswith(f"{overlay}:3:") and "global.pod.labels" in s and "the chart sets this label itself" in s
               for s in shown), shown
