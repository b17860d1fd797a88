"""`grpo-lint --cluster` against the real API server: each prerequisite missing in turn.

The world the preflight reads is made here through the API (namespaces, Secret, PV/PVC, kwok nodes from the
instance catalogue, a KubeRay operator Deployment that the controller manager and kwok bring to Ready). The
cluster-wide prerequisites the session's control plane must keep (the KubeRay CRDs) are taken away on a second
API server over the same etcd under another key prefix: an empty cluster, no CRD, no operator, no namespace.

Where the check stops: the operator this control plane runs is a local process, invisible to the API, as in no
real cluster; the preflight finds an operator by its Deployment (what the KubeRay Helm chart installs), so the
tests create one with the operator image. Whether NetworkPolicies are enforced is not in the API (said once).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from grpo_stack.catalog.instances import lookup
from grpo_stack.localcluster import nodes
from grpo_stack.preflight.run import preflight_many

from tests.cluster.kube_api import Kube, wait_for
from tests.conftest import REPO_ROOT

NS = "preflight"
SECRET_VALUE = "hf_preflightSecretMarker0123456789"  # must never appear in any output
BASE = str(REPO_ROOT / "values" / "qwen3-8b.yaml")  # verl, one GPU node, no reward service
CPU_TYPE = "m5.4xlarge"  # Ray head and fsx-utils; no other test's values use it
GPU_OK = "p5e.48xlarge"  # the GPU type of the complete world
OPERATOR_IMAGE = "quay.io/kuberay/operator:v1.5.0"  # the version this control plane's operator is built at


def overlay(tmp_path: Path, name: str, gpu_type: str = GPU_OK, nodes_: int = 1, **extra) -> list[str]:
    """values/qwen3-8b.yaml with the GPU type (its full EFA count), node count, the CPU type, and `extra`
    merged in (dotted keys)."""
    row = lookup(gpu_type)
    values: dict = {"global": {"cluster": {"gpuInstanceType": gpu_type, "nodes": nodes_, "gpusPerNode": row.gpus,
                                           "efaPerNode": row.efa}},
                    "raycluster": {"head": {"instanceType": CPU_TYPE},
                                   "worker": {"resources": {"cpu": "90", "memory": "600Gi"}}},
                    "fsx-utils": {"instanceType": CPU_TYPE}}
    for dotted, value in extra.items():
        node = values
        *parents, leaf = dotted.split("__")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(values))
    return [BASE, str(path)]


def pvc(name: str, size: str, modes: list[str], storage_class: str = "") -> tuple[dict, dict | None]:
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": NS},
             "spec": {"accessModes": modes, "resources": {"requests": {"storage": size}},
                      "storageClassName": storage_class}}
    if storage_class:  # a class nothing provisions: the claim stays Pending
        return claim, None
    claim["spec"]["volumeName"] = f"{NS}-{name}"
    volume = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": f"{NS}-{name}"},
              "spec": {"capacity": {"storage": size}, "accessModes": modes, "storageClassName": "",
                       "persistentVolumeReclaimPolicy": "Retain",
                       "csi": {"driver": "fsx.csi.aws.com", "volumeHandle": f"fs-{name}"},
                       "claimRef": {"namespace": NS, "name": name}}}
    return claim, volume


@pytest.fixture(scope="module")
def world(control_plane):
    """The complete world, built once: namespace, hf-token Secret, PVCs, nodes, an operator Deployment."""
    kube = Kube(control_plane.kubeconfig)
    kube.apply_once({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    kube.apply_once({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "hf-token", "namespace": NS},
                     "stringData": {"HF_TOKEN": SECRET_VALUE, "EMPTY": ""}})
    for claim, volume in (pvc("fsx-lustre", "2400Gi", ["ReadWriteMany"]), pvc("small", "10Gi", ["ReadWriteMany"]),
                          pvc("single-node", "2400Gi", ["ReadWriteOnce"]),
                          pvc("unbound", "2400Gi", ["ReadWriteMany"], storage_class="no-provisioner")):
        if volume:
            kube.apply_once(volume)
        kube.apply_once(claim)
    for name in ("fsx-lustre", "small", "single-node"):
        wait_for(f"PVC {name} Bound", lambda n=name: (kube.get("v1", "PersistentVolumeClaim", n, NS) or {})
                 .get("status", {}).get("phase") == "Bound")
    control_plane.ensure_nodes(CPU_TYPE, 2)
    control_plane.ensure_nodes(GPU_OK, 2)
    control_plane.ensure_nodes("m5.large", 1, labels={"grpo-stack.test/pool": "operator"})
    yield kube
    kube.delete("v1", "Namespace", NS)
    for name in ("fsx-lustre", "small", "single-node"):
        kube.delete("v1", "PersistentVolume", f"{NS}-{name}")
    kube.close()


@pytest.fixture(scope="module")
def operator(world):
    """A KubeRay operator Deployment (the object its Helm chart installs), Ready through kwok."""
    ns = "kuberay-system"
    world.apply_once({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    labels = {"app.kubernetes.io/name": "kuberay-operator"}
    world.apply_once({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "kuberay-operator", "namespace": ns},
        "spec": {"replicas": 1, "selector": {"matchLabels": labels}, "template": {
            "metadata": {"labels": labels},
            "spec": {"nodeSelector": {"grpo-stack.test/pool": "operator"},
                     "containers": [{"name": "kuberay-operator", "image": OPERATOR_IMAGE,
                                     "resources": {"requests": {"cpu": "100m", "memory": "512Mi"}}}]}}}})
    wait_for("the operator Deployment Ready", lambda: (world.get("apps/v1", "Deployment", "kuberay-operator", ns)
                                                      or {}).get("status", {}).get("readyReplicas"), timeout=90)
    yield
    world.delete("v1", "Namespace", ns)


def make_nodes(control_plane, kube: Kube, instance_type: str, count: int, gpus: int | None = None,
               efa: int | None = None, taints: list | None = None) -> list[str]:
    """`count` kwok nodes of the type (grpo_stack/localcluster/nodes.py); gpus/efa 0: the node advertises no such
    resource, as one whose device plugin is not running."""
    names = []
    for i in range(count):
        name = f"preflight-{instance_type.replace('.', '-')}-{i}"
        node = nodes.node_object(name, instance_type, taints=taints)
        for resource, value in ((nodes.GPU_RESOURCE, gpus), (nodes.EFA_RESOURCE, efa)):
            if value == 0:
                for part in ("allocatable", "capacity"):
                    node["status"][part].pop(resource, None)
        kube.apply_once(node)
        names.append(name)
    control_plane.kubectl("wait", "--for=condition=Ready", *[f"node/{n}" for n in names], "--timeout=60s")
    # Ready comes before the node lifecycle controller lifts its not-ready taint; under load the gap is seconds.
    wait_for("the nodes untainted by the node lifecycle controller", lambda: all(
        not any(t.get("key", "").startswith("node.kubernetes.io/")
                for t in ((kube.get("v1", "Node", n) or {}).get("spec") or {}).get("taints") or [])
        for n in names), timeout=60, every=0.5)
    return names


def run_preflight(control_plane, items: list[list[str]], namespace: str = NS):
    return preflight_many(items, "grpo", namespace, str(control_plane.kubeconfig), None)


def codes(result, severity: str = "error") -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for f in result.findings:
        if f.severity.value == severity:
            out.setdefault(f.code, []).append(f"{f.key_path}: {f.message}")
    return out


def cli(control_plane, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grpo_stack.cli.lint", "--no-cache", *args],
                          capture_output=True, text=True, timeout=180, env={**os.environ, "NO_COLOR": "1"})


def test_operator_missing(control_plane, world, tmp_path):
    """No operator Deployment (this module's `operator` fixture not yet used): GRPO961, an error."""
    if world.get("apps/v1", "Deployment", "kuberay-operator", "kuberay-system"):
        pytest.fail("test order: the operator Deployment exists already")
    result = run_preflight(control_plane, [overlay(tmp_path, "no-operator")])
    assert "GRPO961" in codes(result), result.findings


def test_complete_world_is_clean_and_the_secret_never_shows(control_plane, world, operator, tmp_path):
    """Everything present: no preflight error, the notes name what was found, the Secret's value is nowhere."""
    paths = overlay(tmp_path, "ok")
    proc = cli(control_plane, "--cluster", "--kubeconfig", str(control_plane.kubeconfig), "--namespace", NS,
               "--format", "json", "--base", paths[0], paths[1])
    assert SECRET_VALUE not in proc.stdout + proc.stderr
    found = json.loads(proc.stdout)
    cluster_errors = [f for f in found["findings"] if f["code"].startswith("GRPO96") and f["severity"] == "error"]
    assert cluster_errors == [], cluster_errors
    assert proc.returncode in (0, 1), proc.stderr  # 1 only for static findings of the overlay, never exit 2
    notes = proc.stderr
    assert f"{GPU_OK}: 2 node(s)" in notes and "nvidia.com/gpu=8" in notes
    assert "KubeRay operator: Deployment kuberay-system/kuberay-operator" in notes
    assert notes.count("whether NetworkPolicies are enforced") == 1
    # The served operator is older than the chart's target: a warning, not an error.
    warnings = [f for f in found["findings"] if f["code"] == "GRPO961"]
    assert warnings and all(f["severity"] == "warning" for f in warnings)


@pytest.mark.parametrize("case, extra, namespace, code, key, text", [
    ("namespace", {}, "preflight-absent", "GRPO962", "", "namespace 'preflight-absent' does not exist"),
    ("secret", {"global__secrets__hfToken__name": "hf-token-absent"}, NS, "GRPO963",
     "global.secrets.hfToken.name", "hf-token-absent does not exist"),
    ("secret key", {"global__secrets__hfToken__key": "TOKEN"}, NS, "GRPO963", "global.secrets.hfToken.key",
     "has no key 'TOKEN'"),
    ("empty key", {"global__secrets__hfToken__key": "EMPTY"}, NS, "GRPO963", "global.secrets.hfToken.key", "is empty"),
    ("pvc", {"global__storage__claimName": "absent"}, NS, "GRPO964", "global.storage.claimName",
     "absent does not exist"),
    ("pvc unbound", {"global__storage__claimName": "unbound"}, NS, "GRPO964", "global.storage.claimName",
     "is Pending, not Bound"),
    ("pvc rwo", {"global__storage__claimName": "single-node"}, NS, "GRPO964", "global.storage.claimName",
     "lack ReadWriteMany"),
    ("pvc small", {"global__storage__claimName": "small"}, NS, "GRPO964", "global.storage.claimName",
     "holds 10Gi; the run needs about"),
])
def test_missing_in_the_namespace(control_plane, world, operator, tmp_path, case, extra, namespace, code, key, text):
    result = run_preflight(control_plane, [overlay(tmp_path, case.replace(" ", "-"), **extra)], namespace)
    errors = codes(result)
    assert code in errors, f"{case}: {result.findings}"
    assert any(m.startswith(f"{key}: ") and text in m for m in errors[code]), errors[code]
    assert set(errors) == {code}, f"{case}: only {code} expected, got {errors}"


@pytest.mark.parametrize("case, gpu_type, node_kw, count, want_nodes, code, text", [
    ("no nodes", "p4de.24xlarge", None, 0, 1, "GRPO965", "no schedulable node matches its node selector"),
    ("no gpu plugin", "g6e.48xlarge", {"gpus": 0}, 1, 1, "GRPO966", "the NVIDIA device plugin is not running"),
    ("no efa plugin", "g5.48xlarge", {"efa": 0}, 1, 1, "GRPO966", "the EFA device plugin"),
    ("too few", "p6-b300.48xlarge", {}, 1, 3, "GRPO965", "needs 3 pod(s)"),
    ("untolerated taint", "p4d.24xlarge", {"taints": [nodes.GPU_TAINT, {"key": "reserved", "value": "other-team",
                                                                        "effect": "NoSchedule"}]},
     2, 1, "GRPO965", "taint reserved=other-team:NoSchedule"),
])
def test_gpu_nodes(control_plane, world, operator, tmp_path, case, gpu_type, node_kw, count, want_nodes, code, text):
    """Each GPU case on an instance type of its own, none that the shipped values or the tier's distractor pool
    (tests/cluster/conftest.py) use, so the cases never see each other's nodes."""
    if count:
        make_nodes(control_plane, world, gpu_type, count, **(node_kw or {}))
    result = run_preflight(control_plane, [overlay(tmp_path, case.replace(" ", "-"), gpu_type, want_nodes)])
    errors = codes(result)
    assert code in errors and any(text in m for m in errors[code]), f"{case}: {result.findings}"
    assert all(m.startswith("global.cluster.gpuInstanceType: ") for m in errors[code])


@pytest.fixture(scope="module")
def bare_server(control_plane, tmp_path_factory):
    """A second kube-apiserver over the session's etcd under its own key prefix: a cluster with nothing in it
    (no KubeRay CRD, no operator, no namespace, no node), for the prerequisites the session must keep."""
    from grpo_stack.localcluster.cluster import free_port

    c = control_plane.certs
    port = free_port()
    work = tmp_path_factory.mktemp("bare-apiserver")
    log = (work / "apiserver.log").open("w")
    proc = subprocess.Popen([
        str(Path(control_plane.tools) / "kube-apiserver"), f"--etcd-servers={control_plane.etcd_url}",
        "--etcd-prefix=/grpo-stack-preflight-bare", "--bind-address=127.0.0.1", f"--secure-port={port}",
        "--advertise-address=127.0.0.1", f"--tls-cert-file={c.server_cert}", f"--tls-private-key-file={c.server_key}",
        f"--client-ca-file={c.ca}", "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
        f"--service-account-key-file={c.sa_pub}", f"--service-account-signing-key-file={c.sa_key}",
        "--service-cluster-ip-range=10.96.0.0/16", "--authorization-mode=Node,RBAC", "--endpoint-reconciler-type=none",
        "--profiling=false"], stdout=log, stderr=subprocess.STDOUT)
    try:
        config = yaml.safe_load(Path(control_plane.kubeconfig).read_text())
        config["clusters"][0]["cluster"]["server"] = f"https://127.0.0.1:{port}"
        kubeconfig = work / "kubeconfig"
        kubeconfig.write_text(yaml.safe_dump(config))
        # Kube() runs discovery at once, so it is made only when the server answers.
        kube = wait_for("the bare API server ready", lambda: _ready(str(kubeconfig)), timeout=90, every=0.5)
        kube.close()
        yield kubeconfig
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def _ready(kubeconfig: str) -> Kube | None:
    kube = None
    try:
        kube = Kube(kubeconfig)
        kube.api.call_api("/readyz", "GET", auth_settings=["BearerToken"], _preload_content=False)
        return kube
    except Exception:  # noqa: BLE001 - connection refused while it starts
        if kube is not None:
            kube.close()  # one client per attempt: never leave the failed ones' pools open
        return None


def test_empty_cluster(bare_server, tmp_path):
    """No KubeRay CRD, no operator, no namespace, no node: each said, at its values key; nothing else read."""
    result = preflight_many([overlay(tmp_path, "bare")], "grpo", NS, str(bare_server), None)
    errors = codes(result)
    assert any("CRD rayclusters.ray.io is not installed" in m for m in errors.get("GRPO960", [])), errors
    assert "GRPO961" in errors and "GRPO962" in errors, errors
    assert any("no schedulable node" in m for m in errors.get("GRPO965", [])), errors
    assert "GRPO963" not in errors and "GRPO964" not in errors  # not checked in a namespace that does not exist


def test_unreachable_cluster_is_exit_2(tmp_path):
    config = {"apiVersion": "v1", "kind": "Config", "current-context": "c",
              "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:9",
                                                     "insecure-skip-tls-verify": True}}],
              "users": [{"name": "u", "user": {"token": "t"}}],
              "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump(config))
    proc = cli(None, "--cluster", "--kubeconfig", str(kubeconfig), BASE)
    assert proc.returncode == 2, proc.stderr
    assert "cluster unreachable" in proc.stderr and "Traceback" not in proc.stderr
    missing = cli(None, "--cluster", "--kubeconfig", str(kubeconfig), "--context", "nope", BASE)
    assert missing.returncode == 2 and "cannot load the cluster configuration" in missing.stderr


def _token_kubeconfig(control_plane, kube: Kube, tmp_path: Path, account: str) -> Path:
    kube.apply_once({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": account, "namespace": NS}})
    response = kube.api.call_api(f"/api/v1/namespaces/{NS}/serviceaccounts/{account}/token", "POST",
                                 body={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                                       "spec": {"expirationSeconds": 600}},
                                 header_params={"Content-Type": "application/json", "Accept": "application/json"},
                                 auth_settings=["BearerToken"], _preload_content=False, _return_http_data_only=True)
    token = json.loads(response.data)["status"]["token"]
    config = yaml.safe_load(Path(control_plane.kubeconfig).read_text())
    config["users"] = [{"name": account, "user": {"token": token}}]
    config["contexts"][0]["context"]["user"] = account
    path = tmp_path / f"{account}.kubeconfig"
    path.write_text(yaml.safe_dump(config))
    return path


def test_missing_rbac_is_exit_2(control_plane, world, operator, tmp_path):
    """A service account with no role at all, then one that may read everything but Secrets: exit 2, the
    forbidden request named; the Secret's value never shows."""
    nothing = _token_kubeconfig(control_plane, world, tmp_path, "preflight-nobody")
    paths = overlay(tmp_path, "rbac")
    proc = cli(control_plane, "--cluster", "--kubeconfig", str(nothing), "--namespace", NS, "--base", *paths)
    assert proc.returncode == 2 and "missing RBAC" in proc.stderr, proc.stderr
    reader = _token_kubeconfig(control_plane, world, tmp_path, "preflight-no-secrets")
    world.apply_once({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                      "metadata": {"name": "preflight-no-secrets"},
                      "rules": [{"apiGroups": ["", "apps", "apiextensions.k8s.io", "coordination.k8s.io"],
                                 "resources": ["nodes", "namespaces", "persistentvolumeclaims", "deployments",
                                               "daemonsets", "leases", "customresourcedefinitions"],
                                 "verbs": ["get", "list"]}]})
    world.apply_once({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                      "metadata": {"name": "preflight-no-secrets"},
                      "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                  "name": "preflight-no-secrets"},
                      "subjects": [{"kind": "ServiceAccount", "name": "preflight-no-secrets", "namespace": NS}]})
    def denied() -> subprocess.CompletedProcess | None:
        p = cli(control_plane, "--cluster", "--kubeconfig", str(reader), "--namespace", NS, "--base", *paths)
        return p if "secrets/hf-token is forbidden" in p.stderr else None
    proc = wait_for("RBAC to allow all but Secrets", denied, timeout=30, every=1)
    assert proc.returncode == 2 and SECRET_VALUE not in proc.stdout + proc.stderr


def _leaves(node, path=""):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _leaves(v, f"{path}.{k}" if path else k)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _leaves(v, f"{path}.{i}")
    else:
        yield path


def test_crd_pruning_prediction_matches_the_api_server(control_plane, world, tmp_path):
    """GRPO960's unknown-field walk against the API server's own pruning: a server-side dry run of each shipped
    RayCluster (plus two fields no CRD has) returns the object as stored; exactly the fields the walk names are
    gone."""
    from grpo_stack.lint.engine import lint_values
    from grpo_stack.preflight.checks import unknown_fields

    crd = world.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", "rayclusters.ray.io")
    schema = next(v for v in crd["spec"]["versions"] if v["name"] == "v1")["schema"]["openAPIV3Schema"]
    checked = 0
    for values in sorted((REPO_ROOT / "values").glob("*.yaml")):
        ctx = lint_values([str(values)], namespace=NS).context
        for o in ctx.of_kind("RayCluster"):
            obj = json.loads(json.dumps(o.obj))
            obj["metadata"]["namespace"] = NS
            obj["spec"]["notAField"] = {"x": 1}
            obj["spec"]["headGroupSpec"]["bogus"] = "y"
            predicted = set(unknown_fields(obj["spec"], schema["properties"]["spec"], "spec"))
            stored = world.create(obj, NS, dry_run=True)
            kept = set(_leaves(stored["spec"], "spec"))
            dropped = {leaf for leaf in _leaves(obj["spec"], "spec") if leaf not in kept}
            assert {"spec.notAField", "spec.headGroupSpec.bogus"} <= predicted
            # every dropped leaf lies under a predicted path, and every predicted path was dropped
            assert all(any(d == p or d.startswith(p + ".") for p in predicted) for d in dropped), (dropped, predicted)
            assert all(not any(k == p or k.startswith(p + ".") for k in kept) for p in predicted), predicted
            checked += 1
    assert checked >= 6


def test_events_egress_is_checked_against_the_api_servers_endpoints(control_plane, world, operator, tmp_path):
    """global.job.supervision.events: GRPO968 reads the API server's endpoints from the real API server (the
    `kubernetes` Endpoints of `default`; this control plane runs no endpoint reconciler, so the test writes them as
    an EKS cluster lists them: two control-plane addresses in two subnets, port 443) and warns where the head's
    egress would miss one; without Events it reads nothing."""
    endpoints = {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "kubernetes", "namespace": "default"},
                 "subsets": [{"addresses": [{"ip": "10.0.16.5"}, {"ip": "10.0.33.7"}],
                              "ports": [{"name": "https", "port": 443, "protocol": "TCP"}]}]}
    world.apply_once(endpoints)
    try:
        def events(name: str, cidrs: list[str], port: int = 443) -> dict[str, list[str]]:
            result = run_preflight(control_plane, [overlay(tmp_path, name, global__job__supervision__events={
                "enabled": True, "apiServerCidrs": cidrs, "apiServerPort": port})])
            assert "GRPO968" not in codes(result), "never an error"
            return {k: v for k, v in codes(result, "warning").items() if k == "GRPO968"}

        assert events("both-subnets", ["10.0.16.0/20", "10.0.32.0/20"]) == {}
        (miss,) = events("one-subnet", ["10.0.16.0/20"])["GRPO968"]
        assert miss.startswith("global.job.supervision.events.apiServerCidrs: the API server answers at 10.0.33.7,")
        (port,) = events("kubeadm-port", ["10.0.0.0/16"], 6443)["GRPO968"]
        assert "listen on [443], not apiServerPort 6443" in port
        off = run_preflight(control_plane, [overlay(tmp_path, "no-events")])
        assert "GRPO968" not in codes(off, "warning")
    finally:
        world.delete("v1", "Endpoints", "kubernetes", "default")
