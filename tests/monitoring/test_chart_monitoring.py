"""The chart's monitoring objects: off by default, on with values/monitoring/monitoring.yaml.

Checked here: what Helm renders (the chart's own engine). Admission by the real API server against the Prometheus
Operator's CRDs, and the selectors against the pods KubeRay and the Deployments create, are in
tests/cluster/test_monitoring_admission.py; what a Prometheus does with them is not run here (no Prometheus).
"""

from __future__ import annotations

import json

from tests.conftest import RELEASE
from tests.monitoring.conftest import TRAINING

MONITORING_KINDS = {"PodMonitor", "ServiceMonitor", "PrometheusRule"}


def test_nothing_is_rendered_unless_the_values_ask(rendered_all):
    for name, rendered in rendered_all.items():
        kinds = {o.kind for o in rendered.objects}
        assert not kinds & MONITORING_KINDS, name
        assert not [o for o in rendered.of_kind("ConfigMap") if "grafana_dashboard" in o.obj["metadata"]["labels"]]


def test_each_component_gets_a_pod_monitor_on_its_metrics_port(rendered_on):
    monitors = {o.name: o.obj for o in rendered_on.of_kind("PodMonitor")}
    assert set(monitors) == {f"{RELEASE}-ray", f"{RELEASE}-reward-service", f"{RELEASE}-vllm"}
    ports = {name: [e["port"] for e in m["spec"]["podMetricsEndpoints"]] for name, m in monitors.items()}
    assert ports == {f"{RELEASE}-ray": ["metrics", "step-metrics"], f"{RELEASE}-reward-service": ["metrics"],
                     f"{RELEASE}-vllm": ["http"]}
    ray_pods = {"matchLabels": {"grpo-stack.io/ray-cluster": f"{RELEASE}-ray"}}
    assert monitors[f"{RELEASE}-ray"]["spec"]["selector"] == ray_pods
    for m in monitors.values():
        assert m["metadata"]["labels"]["release"] == "kube-prometheus-stack"  # the Prometheus's selector label
        assert m["spec"]["podMetricsEndpoints"][0]["interval"] == "30s"


def test_the_ports_named_exist_on_the_pods_the_chart_declares(rendered_on):
    """Reward service and vLLM declare their ports in the chart; the Ray `metrics` port is added by KubeRay,
    checked on the operator's pods in the control-plane tier."""
    declared = {}
    for o in rendered_on.of_kind("Deployment"):
        component = o.obj["metadata"]["labels"]["app.kubernetes.io/component"]
        declared[component] = {p["name"] for c in o.obj["spec"]["template"]["spec"]["containers"]
                               for p in c.get("ports") or []}
    assert "metrics" in declared["reward-service"] and "http" in declared["vllm"]


def test_the_step_metrics_reach_prometheus_only_when_the_submit_serves_them(render_values, rendered_on,
                                                                           monitoring_values, step_metrics_port):
    """GrpoNoStep and the training dashboard read the step metrics the submit serves on the head: the head declares
    the port, the Ray PodMonitor scrapes it and the Ray pods' policy admits it. Without a port nothing of it is
    rendered (a scrape of a port nobody serves is a target down)."""
    (cluster,) = rendered_on.of_kind("RayCluster")
    head = cluster.obj["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]
    assert {"name": "step-metrics", "containerPort": step_metrics_port} in head["ports"]
    for group in cluster.obj["spec"]["workerGroupSpecs"]:
        names = {p.get("name") for c in group["template"]["spec"]["containers"] for p in c.get("ports") or []}
        assert "step-metrics" not in names  # nothing serves it there
    (policy,) = [o.obj for o in rendered_on.of_kind("NetworkPolicy") if o.name == f"{RELEASE}-ray"]
    admitted = [r for r in policy["spec"]["ingress"] if {"port": step_metrics_port} in (r.get("ports") or [])]
    assert admitted and all(p == {"namespaceSelector": {}} for r in admitted for p in r["from"])
    without = render_values(TRAINING, {"global.monitoring": monitoring_values})
    (monitor,) = [o.obj for o in without.of_kind("PodMonitor") if o.name == f"{RELEASE}-ray"]
    assert [e["port"] for e in monitor["spec"]["podMetricsEndpoints"]] == ["metrics"]


def test_dcgm_service_monitor_only_when_the_cluster_has_an_exporter(render_values, rendered_on, monitoring_values):
    (sm,) = rendered_on.of_kind("ServiceMonitor")
    assert sm.obj["spec"]["namespaceSelector"] == {"matchNames": ["gpu-operator"]}
    assert sm.obj["spec"]["endpoints"][0]["honorLabels"] is True
    without = {k: v for k, v in monitoring_values.items() if k != "dcgmExporter"}
    assert not render_values("qwen3-235b", {"global.monitoring": without}).of_kind("ServiceMonitor")


def test_dashboards_are_config_maps_for_the_grafana_sidecar(rendered_on):
    maps = [o.obj for o in rendered_on.of_kind("ConfigMap") if o.obj["metadata"]["labels"].get("grafana_dashboard")]
    assert {m["metadata"]["labels"]["grafana_dashboard"] for m in maps} == {"1"}
    titles = {json.loads(next(iter(m["data"].values())))["title"] for m in maps}
    assert titles == {"GRPO / Rollout", "GRPO / Reward", "GRPO / Training", "GRPO / GPU"}


def test_prometheus_is_admitted_to_the_vllm_port_from_its_namespace_only(rendered_on):
    (policy,) = [o.obj for o in rendered_on.of_kind("NetworkPolicy") if o.name == f"{RELEASE}-vllm"]
    peers = [p for rule in policy["spec"]["ingress"] for p in rule["from"] if "namespaceSelector" in p]
    assert peers == [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}]


def test_generated_files_match_their_source():
    from grpo_stack.monitoring.generate import stale_files

    assert not stale_files(), "run python -m grpo_stack.monitoring.generate"


def test_grpo_lint_checks_monitoring_objects_against_the_shipped_crds(rendered_on):
    """grpo-lint validates PodMonitor, ServiceMonitor and PrometheusRule against the CRDs the control-plane tier
    serves (closed to unknown keys, as for every kind it checks)."""
    from grpo_stack.objectschema import validate_object

    objects = [o.obj for o in rendered_on.objects if o.kind in MONITORING_KINDS]
    assert {o["kind"] for o in objects} == MONITORING_KINDS
    for obj in objects:
        assert validate_object(obj, None) == [], obj["metadata"]["name"]
    pm = next(o for o in objects if o["kind"] == "PodMonitor")
    endpoint = {**pm["spec"]["podMetricsEndpoints"][0], "interval": "30 seconds", "scrapeIntervall": "1m"}
    bad = {**pm, "spec": {**pm["spec"], "podMetricsEndpoints": [endpoint]}}
    paths = {e.path for e in validate_object(bad, None)}
    assert paths == {"spec.podMetricsEndpoints.0.interval", "spec.podMetricsEndpoints.0"}, paths
