"""The chart's monitoring objects on the real control plane: the Prometheus Operator's CRDs (v0.85.0, copied with
provenance in grpo_stack/monitoring/crds) served by the real API server, one release installed with
values/monitoring/monitoring.yaml on top (and the vLLM server on), every PodMonitor, ServiceMonitor and
PrometheusRule admitted, and each PodMonitor's selector evaluated against the pods the KubeRay operator and the
Deployments actually created, listed from the API server, with the named port on each.

Where the check stops: no Prometheus Operator or Prometheus runs, so no target is discovered or scraped here (the
metric names are checked in tests/monitoring); the DCGM ServiceMonitor selects a Service of the GPU Operator, which
this cluster does not run, so it is checked up to admission.
"""

from __future__ import annotations

import pytest
import yaml
from grpo_stack.apivalidation.objects import matches

from tests.cluster.conftest import namespace_for
from tests.cluster.releases import REPO_ROOT, HelmError, Release, prepare_namespace

CRD_DIR = REPO_ROOT / "tools" / "grpo_stack" / "monitoring" / "crds"
MONITORING = {"PodMonitor": "podmonitors", "ServiceMonitor": "servicemonitors", "PrometheusRule": "prometheusrules"}


@pytest.fixture(scope="module")
def monitored(node_pool, helm_bin):
    cp = node_pool
    crds = [yaml.safe_load(p.read_text()) for p in sorted(CRD_DIR.glob("*.yaml"))]
    cp.apply(crds)
    cp.kubectl("wait", "--for=condition=Established", "--timeout=60s",
               *[f"crd/{c['metadata']['name']}" for c in crds])
    namespace = namespace_for("monitoring")
    prepare_namespace(cp, namespace)
    values = [REPO_ROOT / "values" / "qwen3-30b.yaml", REPO_ROOT / "values" / "monitoring" / "monitoring.yaml"]
    release = Release(cp, helm_bin, "grpo", namespace, values, sets=["global.components.vllm=true"])
    try:
        release.install()
        release.wait_running()
        yield release
    finally:
        try:
            release.uninstall()
        except HelmError as exc:  # tear-down goes on; the failure is the tests'
            print(exc)
        cp.kubectl("delete", "namespace", namespace, "--wait=false", check=False)


def contains(live, rendered) -> bool:
    """Every rendered field is stored with its value (the server may add defaults beside them)."""
    if isinstance(rendered, dict):
        return isinstance(live, dict) and all(k in live and contains(live[k], v) for k, v in rendered.items())
    if isinstance(rendered, list):
        return isinstance(live, list) and len(live) == len(rendered) and all(map(contains, live, rendered))
    return live == rendered


def test_every_monitoring_object_is_admitted(monitored):
    rendered = [o for o in monitored.manifest() if o.get("kind") in MONITORING]
    assert {o["kind"] for o in rendered} == set(MONITORING)
    for obj in rendered:
        live = monitored.cp.get("-n", monitored.namespace, MONITORING[obj["kind"]], obj["metadata"]["name"])
        # Stored as rendered: the CRD's structural schema prunes unknown fields silently, so a typo would vanish.
        assert contains(live["spec"], obj["spec"]), (obj["metadata"]["name"], live["spec"])


def test_the_crd_schema_is_enforced(monitored):
    """The served CRD validates: a PodMonitor with a malformed interval is refused (so admission above means
    something)."""
    (pm,) = [o for o in monitored.manifest()
             if o.get("kind") == "PodMonitor" and o["metadata"]["name"].endswith("-ray")]
    bad = {**pm, "metadata": {"name": "bad-interval", "namespace": monitored.namespace},
           "spec": {**pm["spec"], "podMetricsEndpoints": [{**pm["spec"]["podMetricsEndpoints"][0],
                                                            "interval": "30 seconds"}]}}
    proc = monitored.cp.kubectl("create", "--dry-run=server", "-f", "-", input=yaml.safe_dump(bad), check=False)
    assert proc.returncode != 0 and "interval" in proc.stderr, proc.stderr


def test_pod_monitors_select_the_pods_the_cluster_created_on_their_named_port(monitored):
    pods = monitored.cp.get("-n", monitored.namespace, "pods")["items"]
    monitors = [o for o in monitored.manifest() if o.get("kind") == "PodMonitor"]
    assert len(monitors) == 3
    for pm in monitors:
        selected = [p for p in pods if matches(pm["spec"]["selector"], p["metadata"].get("labels") or {})]
        assert selected, f"{pm['metadata']['name']} selects no pod"
        port = pm["spec"]["podMetricsEndpoints"][0]["port"]
        for pod in selected:
            names = {p.get("name") for c in pod["spec"]["containers"] for p in c.get("ports") or []}
            assert port in names, (pm["metadata"]["name"], pod["metadata"]["name"], names)
        if pm["metadata"]["name"].endswith("-ray"):
            # KubeRay's head and every worker (it adds the `metrics` port to the Ray container itself).
            types = {p["metadata"]["labels"].get("ray.io/node-type") for p in selected}
            assert types == {"head", "worker"}, types
