"""The chart's monitoring objects on the real control plane: the Prometheus Operator's CRDs (v0.85.0, copied with
provenance in grpo_stack/monitoring/crds) served by the real API server, one release installed with
values/monitoring/monitoring.yaml on top (and the vLLM server on), every PodMonitor, ServiceMonitor and
PrometheusRule admitted, and each PodMonitor's selector evaluated against the pods the KubeRay operator and the
Deployments actually created, listed from the API server, with the named port on each.

The same release turns on global.job.supervision.events: the head pod the operator created runs as the chart's
account with its token mounted by the API server, the supervisor's EventSink posts an Event with a token of that
account, and the namespace's default account is refused (so the Role is what grants it).

Where the check stops: no Prometheus Operator or Prometheus runs, so no target is discovered or scraped here (the
metric names are checked in tests/monitoring); the DCGM ServiceMonitor selects a Service of the GPU Operator, which
this cluster does not run, so it is checked up to admission. No CNI enforces NetworkPolicies here: the head's
egress rule is checked to name the address and port the EventSink reached, not enforced.
"""

from __future__ import annotations

import shutil
from urllib.parse import urlsplit

import pytest
import yaml
from grpo_stack.apivalidation.objects import matches
from grpo_stack.supervise.events import EventSink

from tests.cluster.conftest import namespace_for
from tests.cluster.releases import REPO_ROOT, HelmError, Release, prepare_namespace

CRD_DIR = REPO_ROOT / "tools" / "grpo_stack" / "monitoring" / "crds"
MONITORING = {"PodMonitor": "podmonitors", "ServiceMonitor": "servicemonitors", "PrometheusRule": "prometheusrules"}


@pytest.fixture(scope="module")
def monitored(node_pool, helm_bin):
    cp = node_pool
    crds = [yaml.safe_load(p.read_text()) for p in sorted(CRD_DIR.glob("*.yaml"))]
    cp.apply(crds)
    cp.wait_established(*[c["metadata"]["name"] for c in crds])
    namespace = namespace_for("monitoring")
    prepare_namespace(cp, namespace)
    values = [REPO_ROOT / "values" / "qwen3-30b.yaml", REPO_ROOT / "values" / "monitoring" / "monitoring.yaml"]
    api = urlsplit(cp.server)
    events = ["global.job.supervision.events.enabled=true",
              f"global.job.supervision.events.apiServerCidrs={{{api.hostname}/32}}",
              f"global.job.supervision.events.apiServerPort={api.port}"]
    release = Release(cp, helm_bin, "grpo", namespace, values, sets=["global.components.vllm=true", *events])
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
        named = {pod["metadata"]["name"]: {declared.get("name") for c in pod["spec"]["containers"]
                                            for declared in c.get("ports") or []} for pod in selected}
        for pod, names in named.items():
            assert port in names, (pm["metadata"]["name"], pod, names)
        for endpoint in pm["spec"]["podMetricsEndpoints"][1:]:  # a port some of the pods serve (the head's)
            assert any(endpoint["port"] in names for names in named.values()), (pm["metadata"]["name"], endpoint)
        if pm["metadata"]["name"].endswith("-ray"):
            # KubeRay's head and every worker (it adds the `metrics` port to the Ray container itself).
            types = {p["metadata"]["labels"].get("ray.io/node-type") for p in selected}
            assert types == {"head", "worker"}, types
            # values/monitoring/monitoring.yaml serves the step metrics on the head: scraped there.
            assert [e["port"] for e in pm["spec"]["podMetricsEndpoints"]] == ["metrics", "step-metrics"]


def ray_pods(release, node_type: str) -> list[dict]:
    return [p for p in release.pods() if (p["metadata"].get("labels") or {}).get("ray.io/node-type") == node_type]


def test_the_head_alone_runs_as_the_events_account_with_its_token_mounted(monitored):
    """The API server's ServiceAccount admission mounts the token into the pod KubeRay made from the chart's head
    template; the GPU workers, which run model-written rewards, still get none."""
    (head,) = ray_pods(monitored, "head")
    assert head["spec"]["serviceAccountName"] == "grpo-ray-head"
    mounts = {m["mountPath"] for m in head["spec"]["containers"][0].get("volumeMounts") or []}
    assert "/var/run/secrets/kubernetes.io/serviceaccount" in mounts, mounts
    env = {e["name"]: e for e in head["spec"]["containers"][0]["env"]}
    assert env["POD_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name"
    workers = ray_pods(monitored, "worker")
    assert workers
    for pod in workers:
        assert pod["spec"].get("serviceAccountName", "default") == "default"
        assert pod["spec"]["automountServiceAccountToken"] is False
        assert not any("serviceaccount" in m["mountPath"] for c in pod["spec"]["containers"]
                       for m in c.get("volumeMounts") or [])


def account_dir(release, tmp_path, account: str):
    """What the kubelet would mount for `account`: a token the API server issued for it, its CA, the namespace."""
    cp = release.cp
    directory = tmp_path / account
    directory.mkdir()
    token = cp.kubectl("create", "token", account, "-n", release.namespace, "--duration=10m").stdout.strip()
    (directory / "token").write_text(token)
    shutil.copy(cp.certs.ca, directory / "ca.crt")
    (directory / "namespace").write_text(release.namespace)
    return directory


def sink(release, directory, lines: list[str], pod: str) -> EventSink:
    api = urlsplit(release.cp.server)
    environ = {"KUBERNETES_SERVICE_HOST": api.hostname, "KUBERNETES_SERVICE_PORT": str(api.port), "POD_NAME": pod}
    return EventSink(lines.append, enabled=True, account_dir=directory, environ=environ)


def events_with_reason(release, reason: str) -> list[dict]:
    return [e for e in release.cp.get("-n", release.namespace, "events")["items"] if e.get("reason") == reason]


def test_the_supervisor_posts_an_event_on_the_head_pod_as_the_head_account(monitored, tmp_path):
    (head,) = ray_pods(monitored, "head")
    pod = head["metadata"]["name"]
    lines: list[str] = []
    sink(monitored, account_dir(monitored, tmp_path, "grpo-ray-head"), lines, pod).emit(
        "TrainingStalled", "no new step in 700 s (bound 600 s)")
    assert lines == []
    (event,) = events_with_reason(monitored, "TrainingStalled")
    assert event["involvedObject"]["name"] == pod and event["involvedObject"]["kind"] == "Pod"
    assert (event["type"], event["message"]) == ("Warning", "no new step in 700 s (bound 600 s)")
    assert event["source"]["component"] == "grpo-stack-supervisor"


def test_an_account_the_role_does_not_name_is_refused_and_said_once(monitored, tmp_path):
    """The namespace's default account may not create events: the Role, not an open cluster, grants it. The sink
    says so once and goes quiet; the run would go on."""
    (head,) = ray_pods(monitored, "head")
    lines: list[str] = []
    events = sink(monitored, account_dir(monitored, tmp_path, "default"), lines, head["metadata"]["name"])
    events.emit("RunGaveUp", "refused")
    events.emit("RunGaveUp", "refused")
    assert len(lines) == 1 and "403" in lines[0], lines
    assert events_with_reason(monitored, "RunGaveUp") == []


def test_the_head_egress_names_the_api_server_the_sink_reached(monitored):
    """The head-only NetworkPolicy selects the live head pod and no worker, and admits the API server's address
    and port, the ones the supervisor's client used above."""
    api = urlsplit(monitored.cp.server)
    (policy,) = [o for o in monitored.manifest()
                 if o.get("kind") == "NetworkPolicy" and o["metadata"]["name"] == "grpo-ray-head"]
    selected = [p["metadata"]["labels"].get("ray.io/node-type") for p in monitored.pods()
                if matches(policy["spec"]["podSelector"], p["metadata"].get("labels") or {})]
    assert selected == ["head"]
    (rule,) = policy["spec"]["egress"]
    assert rule["to"] == [{"ipBlock": {"cidr": f"{api.hostname}/32"}}]
    assert rule["ports"] == [{"port": api.port}]
