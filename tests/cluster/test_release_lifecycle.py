"""Every shipped values file on the real control plane: `helm install` (Helm 4.1.4), the evaluation release on top
(values/eval/eval.yaml), scheduling, KubeRay's reconcile, endpoints, `helm test`, `helm uninstall`.

What is real: the API server (admission, validation, the KubeRay v1.7.0 CRD schema, Pod Security), the scheduler,
the controller manager (ReplicaSets, Jobs, EndpointSlices, garbage collection, PV binding) and the KubeRay operator
(v1.5.0, the newest the Go module proxy serves; docs/control-plane.md). What is not: kwok stands in for the kubelet,
so no container runs; a pod is Ready once scheduled, and a `helm test` hook or Job pod exits 0 without running its
script (those scripts meet their real peers in tests/chart, tests/reward and tests/eval).
"""

from __future__ import annotations

import json
import re
import time
from types import SimpleNamespace

import pytest
from grpo_stack.apivalidation.objects import matches
from grpo_stack.localcluster.nodes import INSTANCE_TYPE_LABEL

from tests.cluster.conftest import namespace_for
from tests.cluster.releases import INSTANCE_LABEL, REPO_ROOT, Release, prepare_namespace
from tests.cluster.workloads import load_manifests, network_policy_selectors

VALUES = sorted((REPO_ROOT / "values").glob("*.yaml"))
EVAL_VALUES = REPO_ROOT / "values" / "eval" / "eval.yaml"
# The NetworkPolicy peer for DNS selects CoreDNS pods, which this control plane does not run.
NOT_HERE = {"k8s-app": "kube-dns"}


@pytest.fixture(scope="module", params=[p.stem for p in VALUES])
def run(request, node_pool, helm_bin):
    """The training release `grpo` of one values file and the evaluation release `grpo-eval` on top of it, both
    installed in one namespace, every pod settled; uninstalled afterwards if a test has not done it."""
    cp = node_pool
    namespace = namespace_for("run", request.param)
    prepare_namespace(cp, namespace)
    values = REPO_ROOT / "values" / f"{request.param}.yaml"
    training = Release(cp, helm_bin, "grpo", namespace, [values])
    evaluation = Release(cp, helm_bin, "grpo-eval", namespace, [values, EVAL_VALUES])
    state = SimpleNamespace(name=request.param, namespace=namespace, training=training, evaluation=evaluation,
                            installed=True)
    try:
        training.install()
        training.wait_running()
        evaluation.install()
        evaluation.wait_running()
        yield state
    finally:
        if state.installed:
            for release in (evaluation, training):
                try:
                    release.helm("uninstall", release.name, "-n", namespace, "--ignore-not-found")
                except AssertionError as exc:  # tear-down must go on; the failure is the tests'
                    print(exc)
        cp.kubectl("delete", "namespace", namespace, "--wait=false", check=False)


def releases(run):
    return (run.training, run.evaluation)


def test_api_server_admits_and_returns_every_object(run):
    """Every object of both releases exists on the API server as Helm sent it (kind, name, labels)."""
    for release in releases(run):
        sent = release.manifest()
        listing = run.training.cp.kubectl("get", "-n", run.namespace, "-f", "-", "-o", "json",
                                          input="\n---\n".join(_dump(o) for o in sent))
        stored = {(o["kind"], o["metadata"]["name"]): o for o in _items(listing.stdout)}
        for obj in sent:
            key = (obj["kind"], obj["metadata"]["name"])
            assert key in stored, f"{release.name}: {key} not on the API server"
            labels = stored[key]["metadata"].get("labels") or {}
            assert (obj["metadata"].get("labels") or {}).items() <= labels.items(), key


def test_reward_service_rollout_settings_are_admitted_as_rendered(run):
    """The reward service's rolling update never lowers capacity (maxSurge 1, maxUnavailable 0), and its pods get
    the preStop delay and grace period the chart derives from the trainer's reward timeout: the API server admits
    them (the preStop `sleep` action included) and stores them as rendered. tests/reward/test_reward_drain.py
    terminates real service processes with these numbers; kwok runs no container, so that is where the drain
    itself is checked."""
    sent = [o for o in run.training.manifest() if o["kind"] == "Deployment"
            and (o["metadata"].get("labels") or {}).get("app.kubernetes.io/name") == "reward-service"]
    if not sent:
        pytest.skip(f"values/{run.name}.yaml installs no reward service")
    rendered = sent[0]
    stored = json.loads(run.training.cp.kubectl("get", "deployment", rendered["metadata"]["name"], "-n",
                                                run.namespace, "-o", "json").stdout)
    assert stored["spec"]["strategy"] == {"type": "RollingUpdate",
                                          "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
    pod, sent_pod = stored["spec"]["template"]["spec"], rendered["spec"]["template"]["spec"]
    assert pod["terminationGracePeriodSeconds"] == sent_pod["terminationGracePeriodSeconds"]
    lifecycle = pod["containers"][0]["lifecycle"]
    assert lifecycle == sent_pod["containers"][0]["lifecycle"] and lifecycle["preStop"]["sleep"]["seconds"] > 0
    assert pod["terminationGracePeriodSeconds"] > lifecycle["preStop"]["sleep"]["seconds"]


def test_every_pod_is_placed_on_its_instance_type(run):
    """The scheduler places each pod on a node of the instance type it was meant for (the values' choice for the
    Ray head, the GPU workers, vLLM and each service), none stays Pending; GPU and EFA requests are within what
    the node advertises (the catalogue's allocatable)."""
    cp = run.training.cp
    nodes = {n["metadata"]["name"]: n for n in cp.get("nodes")["items"]}
    for release in releases(run):
        values = release.computed_values()
        intended = _intended_instance_types(values)
        pods = release.pods()
        assert pods, f"{release.name} made no pods"
        for pod in pods:
            name = pod["metadata"]["name"]
            assert pod["status"].get("phase") != "Pending", f"{name} is Pending"
            node = nodes[pod["spec"]["nodeName"]]
            placed = node["metadata"]["labels"][INSTANCE_TYPE_LABEL]
            component = pod["metadata"]["labels"].get("app.kubernetes.io/component")
            if component in intended:
                assert placed == intended[component], f"{name} ({component}) on {placed}, not {intended[component]}"
            wanted = (pod["spec"].get("nodeSelector") or {}).get(INSTANCE_TYPE_LABEL)
            if wanted:
                assert placed == wanted, f"{name} on {placed}, its nodeSelector says {wanted}"
            for resource in ("nvidia.com/gpu", "vpc.amazonaws.com/efa"):
                asked = sum(int((c.get("resources") or {}).get("requests", {}).get(resource, 0))
                            for c in pod["spec"]["containers"])
                assert asked <= int(node["status"]["allocatable"].get(resource, 0)), (name, resource)


def test_operator_makes_the_ray_pods_the_chart_and_recipe_select(run):
    """KubeRay turns the RayCluster into one head and every worker, labelled as run-on-cluster.sh, NOTES and the
    NetworkPolicies select them: the release's cluster by `app.kubernetes.io/instance`, its pods by
    `ray.io/cluster` and `ray.io/node-type` (the recipe) or the chart's `grpo-stack.io/ray-cluster` (NOTES, the
    NetworkPolicies, the sandbox's anti-affinity). Every pod selector of every NetworkPolicy of both releases matches
    live pods (or the `helm test` pods it is written for), and every `-l` selector NOTES prints finds pods."""
    cp, ns = run.training.cp, run.namespace
    clusters = cp.get("-n", ns, "rayclusters.ray.io", "-l", f"{INSTANCE_LABEL}={run.training.name}")["items"]
    ray_enabled = run.training.computed_values()["global"]["components"]["raycluster"]
    assert len(clusters) == (1 if ray_enabled else 0)
    for cluster in clusters:
        name = cluster["metadata"]["name"]
        want = sum(g["replicas"] for g in cluster["spec"]["workerGroupSpecs"])
        heads = cp.get("-n", ns, "pods", "-l", f"ray.io/cluster={name},ray.io/node-type=head")["items"]
        workers = cp.get("-n", ns, "pods", "-l", f"ray.io/cluster={name},ray.io/node-type=worker")["items"]
        assert len(heads) == 1 and len(workers) == want, (len(heads), len(workers), want)
        for pod in heads + workers:
            assert pod["metadata"]["labels"][INSTANCE_LABEL] == run.training.name, pod["metadata"]["name"]
    live = [p["metadata"].get("labels") or {} for p in cp.get("-n", ns, "pods")["items"]]
    for release in releases(run):
        hooks = [h["metadata"].get("labels") or {} for h in _hooks(release) if h.get("kind") == "Pod"]
        for where, selector in network_policy_selectors(release.manifest() + _hooks(release)):
            if selector.get("matchLabels") == NOT_HERE:
                continue
            assert any(matches(selector, labels) for labels in live + hooks), \
                f"{release.name}: {where} {selector} selects no pod"
        for selector in re.findall(r"-l (\S+)", release.notes()):
            found = cp.get("-n", ns, "pods", "-l", selector)["items"]
            assert found, f"{release.name} NOTES: `-l {selector}` finds no pod"


def test_services_have_ready_endpoints(run):
    """Each Service of both releases (and the head Service KubeRay makes) has ready endpoints once kwok marks its
    pods Ready: the EndpointSlice controller agrees that the Service's selector matches the Deployment's pods."""
    cp, ns = run.training.cp, run.namespace
    services = [o["metadata"]["name"] for r in releases(run) for o in r.manifest() if o["kind"] == "Service"]
    services += [s["metadata"]["name"] for s in cp.get("-n", ns, "services", "-l", "ray.io/node-type=head")["items"]]
    for service in services:
        deadline = time.monotonic() + 60
        while True:
            slices = cp.get("-n", ns, "endpointslices", "-l", f"kubernetes.io/service-name={service}")["items"]
            ready = [e for s in slices for e in s.get("endpoints") or [] if (e.get("conditions") or {}).get("ready")]
            if ready:
                break
            assert time.monotonic() < deadline, f"Service {service} has no ready endpoint: {slices}"
            time.sleep(1)


def test_helm_test_hooks_run_to_completion(run):
    """`helm test` creates each test hook pod (admitted, scheduled) and sees it succeed (kwok completes it; no
    container runs). A release without hooks has nothing to run and says so."""
    for release in releases(run):
        hooks = [h["metadata"]["name"] for h in _hooks(release) if h.get("kind") == "Pod"]
        out = release.helm("test", release.name, "-n", run.namespace, "--timeout", "120s")
        for hook in hooks:
            phase = re.search(rf"TEST SUITE:\s+{re.escape(hook)}\s*\n(?:.*\n)*?\s*Phase:\s+(\w+)", out)
            assert phase and phase.group(1) == "Succeeded", out


# docs/security.md "Every pod": which pods run as root and which add a capability. Pod Security is asked of the
# API server itself: each live pod's spec is created with --dry-run=server in namespaces enforcing each level.
NON_ROOT = {"reward-service", "lm-eval", "reward-service-test", "sandbox-fusion-test", "vllm-test"}
ROOT = {"ray-head", "ray-worker", "sandbox-fusion", "vllm", "fsx-utils"}


@pytest.fixture(scope="module")
def pod_security_namespaces(node_pool):
    for level in ("restricted", "baseline"):
        node_pool.create_namespace(f"pss-{level}", enforce=level, warn=level)
    return {level: f"pss-{level}" for level in ("restricted", "baseline")}


def test_pod_security_levels_are_the_documented_ones(run, pod_security_namespaces):
    """The API server's Pod Security admission on every pod the releases made (and every helm test hook): the
    non-root pods meet `restricted`; the root pods fail `restricted` only for running as root; they meet
    `baseline`, except GPU workers with EFA, whose IPC_LOCK (docs/security.md) `baseline` does not allow, so a
    namespace running EFA workers needs `privileged` enforcement (docs/control-plane.md)."""
    cp = run.training.cp
    efa = run.training.computed_values()["global"]["cluster"]["efaPerNode"] > 0
    pods = [p for r in releases(run) for p in r.pods()]
    pods += [{"metadata": h["metadata"], "spec": h["spec"]} for r in releases(run) for h in _hooks(r)
             if h.get("kind") == "Pod"]
    for pod in pods:
        component = pod["metadata"]["labels"]["app.kubernetes.io/component"]
        verdict = {level: _admission(cp, pod, ns) for level, ns in pod_security_namespaces.items()}
        name = pod["metadata"]["name"]
        if component in NON_ROOT:
            assert verdict == {"restricted": "", "baseline": ""}, (name, verdict)
            continue
        assert component in ROOT, f"{name}: component {component} is in neither list of docs/security.md"
        refused = verdict["restricted"]
        assert "runAsNonRoot != true" in refused, (name, verdict)
        adds_ipc_lock = component == "ray-worker" and efa
        others = set(re.findall(r'violates PodSecurity "restricted:[^"]*": (.*)', refused)[0].split("), "))
        others = {o for o in others if "runAsNonRoot" not in o}
        if adds_ipc_lock:
            assert others and all("IPC_LOCK" in o for o in others), (name, others)
            assert "IPC_LOCK" in verdict["baseline"], (name, verdict)
        else:
            assert not others, (name, others)
            assert verdict["baseline"] == "", (name, verdict)


def _admission(cp, pod: dict, namespace: str) -> str:
    """'' when the API server admits the pod into `namespace` (dry run), else its refusal."""
    meta = pod["metadata"]
    obj = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": meta["name"], "labels": meta.get("labels") or {},
                        "annotations": meta.get("annotations") or {}},
           "spec": {k: v for k, v in pod["spec"].items() if k not in ("nodeName",)}}
    proc = cp.kubectl("create", "--dry-run=server", "-n", namespace, "-f", "-", input=_dump(obj), check=False)
    return "" if proc.returncode == 0 else proc.stderr.strip()


def test_uninstall_leaves_nothing_behind(run):
    """`helm uninstall` of both releases leaves no object of either behind: not the chart's own objects, not the
    pods and Services the operator and the controllers made from them (garbage collection by owner)."""
    cp, ns = run.training.cp, run.namespace
    for release in (run.evaluation, run.training):
        release.uninstall()
    run.installed = False
    kinds = ",".join(k for k in cp.kubectl("api-resources", "--verbs=list", "--namespaced", "-o", "name").stdout.split()
                     if not k.startswith("events"))
    selectors = (f"{INSTANCE_LABEL} in (grpo,grpo-eval)", "ray.io/cluster")
    deadline = time.monotonic() + 90
    while True:
        left = [f"{o['kind']}/{o['metadata']['name']}" for selector in selectors
                for o in cp.get("-n", ns, kinds, "-l", selector)["items"]]
        if not left:
            break
        assert time.monotonic() < deadline, f"left behind after helm uninstall: {left}"
        time.sleep(2)


# --- helpers ------------------------------------------------------------------------------------------------------
def _intended_instance_types(values: dict) -> dict[str, str]:
    """Component label -> the instance type the values file chose for it."""
    g = values["global"]
    out = {"ray-worker": g["cluster"]["gpuInstanceType"]}
    # Computed values hold a section only for the components the release enables, and a key only where set.
    head = (values.get("raycluster") or {}).get("head") or {}
    if head.get("instanceType"):
        out["ray-head"] = head["instanceType"]
    for component in ("reward-service", "sandbox-fusion", "fsx-utils", "vllm", "lm-eval"):
        chosen = (values.get(component) or {}).get("instanceType")
        if chosen:
            out[component] = chosen
    return out


def _hooks(release: Release) -> list[dict]:
    return load_manifests(release.helm("get", "hooks", release.name, "-n", release.namespace))


def _dump(obj: dict) -> str:
    return json.dumps(obj)


def _items(text: str) -> list[dict]:
    data = json.loads(text)
    return data.get("items", [data])


