"""Manifest mode refuses, at the key, what the API server refuses beyond the OpenAPI schemas (names, labels,
quantities, ports, CIDRs, peers, selectors; the rules of k8s.io/apimachinery's validation), and accepts the
valid spelling next to each. Where the check stops: the rules are restated from apimachinery and
k8s.io/kubernetes' apis validation; agreement with a real API server is the control-plane tier's oracle."""

from __future__ import annotations

import copy
import json

import pytest
import yaml
from grpo_stack.cli.lint import main

DIGEST = "busybox@sha256:" + "0" * 64
DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "grpo",
                                                                "labels": {"app": "web"}},
    "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "web", "image": DIGEST, "ports": [{"containerPort": 8080, "name": "http"}],
                                 "resources": {"requests": {"cpu": "500m", "memory": "1Gi"},
                                               "limits": {"memory": "2Gi"}}}]}}},
}
POLICY = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
          "metadata": {"name": "np", "namespace": "grpo"},
          "spec": {"podSelector": {}, "ingress": [{"from": [{"ipBlock": {"cidr": "10.0.0.0/16",
                                                                         "except": ["10.0.1.0/24"]}}]}]}}
SERVICE = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "grpo"},
           "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": "http"}]}}
C = ("spec", "template", "spec", "containers", 0)
# A custom resource's pod templates: the CRD admits them, the API server refuses the Pod KubeRay builds.
RAYCLUSTER = {
    "apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": "rc", "namespace": "grpo"},
    "spec": {"headGroupSpec": {"rayStartParams": {}, "template": {
        "metadata": {"labels": {"app": "rc"}},
        "spec": {"containers": [{"name": "ray-head", "image": DIGEST,
                                 "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                                 "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}],
                 "volumes": [{"name": "data", "emptyDir": {}}]}}}}}
H = ("spec", "headGroupSpec", "template", "spec")

# (base, path, bad value, error key path)
CASES = [
    (DEPLOYMENT, ("metadata", "name"), "Bad_Name", "metadata.name"),
    (DEPLOYMENT, ("metadata", "name"), "a" * 254, "metadata.name"),
    (DEPLOYMENT, ("metadata", "labels", "app"), "not ok!", "metadata.labels.app"),
    (DEPLOYMENT, ("metadata", "labels", "app"), "a" * 64, "metadata.labels.app"),
    (DEPLOYMENT, ("metadata", "labels"), {"bad key!": "x"}, "metadata.labels.bad key!"),
    (DEPLOYMENT, ("spec", "template", "metadata", "labels", "app"), "api", "spec.template.metadata.labels"),
    (DEPLOYMENT, (*C, "name"), "Web", f"{'.'.join(map(str, C))}.name"),
    (DEPLOYMENT, (*C, "ports", 0, "containerPort"), 70000, f"{'.'.join(map(str, C))}.ports.0.containerPort"),
    (DEPLOYMENT, (*C, "ports", 0, "name"), "Http_Port", f"{'.'.join(map(str, C))}.ports.0.name"),
    (DEPLOYMENT, (*C, "resources", "requests", "cpu"), "2x", f"{'.'.join(map(str, C))}.resources.requests.cpu"),
    (DEPLOYMENT, (*C, "resources", "requests", "memory"), "3Gi",
     f"{'.'.join(map(str, C))}.resources.requests.memory"),
    (POLICY, ("spec", "ingress", 0, "from", 0, "ipBlock", "cidr"), "10.0.0.0/33",
     "spec.ingress.0.from.0.ipBlock.cidr"),
    (POLICY, ("spec", "ingress", 0, "from", 0, "ipBlock", "except", 0), "192.168.0.0/24",
     "spec.ingress.0.from.0.ipBlock.except.0"),
    (POLICY, ("spec", "ingress", 0, "from", 0), {"podSelector": None}, "spec.ingress.0.from.0"),
    (DEPLOYMENT, (*C, "imagePullPolicy"), "Sometimes", f"{'.'.join(map(str, C))}.imagePullPolicy"),
    (DEPLOYMENT, (*C, "env"), [{"name": "A=B", "value": "x"}], f"{'.'.join(map(str, C))}.env.0.name"),
    (DEPLOYMENT, (*C, "readinessProbe"), {"tcpSocket": {"port": 8080}, "timeoutSeconds": -1},
     f"{'.'.join(map(str, C))}.readinessProbe.timeoutSeconds"),
    (DEPLOYMENT, (*C, "securityContext"), {"runAsUser": -1}, f"{'.'.join(map(str, C))}.securityContext.runAsUser"),
    (DEPLOYMENT, ("spec", "template", "spec", "securityContext"), {"fsGroup": -5},
     "spec.template.spec.securityContext.fsGroup"),
    (DEPLOYMENT, (*C, "volumeMounts"), [{"name": "cache", "mountPath": "/cache"}],
     f"{'.'.join(map(str, C))}.volumeMounts.0.name"),
    (DEPLOYMENT, ("spec", "replicas"), -1, "spec.replicas"),
    (DEPLOYMENT, ("spec", "selector", "matchExpressions"), [{"key": "a", "operator": "Near", "values": ["b"]}],
     "spec.selector.matchExpressions.0.operator"),
    (DEPLOYMENT, ("spec", "selector", "matchExpressions"), [{"key": "a", "operator": "Exists", "values": ["b"]}],
     "spec.selector.matchExpressions.0.values"),
    (SERVICE, ("spec", "selector", "app"), "bad value", "spec.selector.app"),
    (SERVICE, ("spec", "ports", 0, "nodePort"), 30080, "spec.ports.0.nodePort"),
    (POLICY, ("spec", "podSelector"), {"matchLabels": {"app": "bad value"}}, "spec.podSelector.matchLabels.app"),
    (POLICY, ("spec", "ingress", 0, "ports"), [{"port": 80, "protocol": "ICMP"}], "spec.ingress.0.ports.0.protocol"),
    (POLICY, ("spec", "ingress", 0, "ports"), [{"port": "x_y"}], "spec.ingress.0.ports.0.port"),
    (POLICY, ("spec", "ingress", 0, "ports"), [{"port": 80, "endPort": 79}], "spec.ingress.0.ports.0.endPort"),
    (POLICY, ("spec", "ingress", 0, "ports"), [{"port": "http", "endPort": 90}], "spec.ingress.0.ports.0.endPort"),
    (POLICY, ("spec", "policyTypes"), ["Ingress", "Sideways"], "spec.policyTypes.1"),
    (POLICY, ("spec", "policyTypes"), ["Ingress", "Egress", "Ingress"], "spec.policyTypes"),
    (POLICY, ("metadata",), {"namespace": "grpo"}, "metadata.name"),
    (SERVICE, ("spec", "ports"), [{"name": "a", "port": 80}, {"port": 81}], "spec.ports.1.name"),
    (SERVICE, ("spec", "ports"), [{"name": "a", "port": 80}, {"name": "a", "port": 81}], "spec.ports.1.name"),
    (DEPLOYMENT, ("spec", "template", "spec", "containers", 1), {"name": "web", "image": DIGEST},
     "spec.template.spec.containers.1.name"),
    (DEPLOYMENT, ("spec", "template", "spec", "volumes"), [{"name": "Cache_Dir", "emptyDir": {}}],
     "spec.template.spec.volumes.0.name"),
    (RAYCLUSTER, (*H, "containers", 0, "name"), "Ray_Head", f"{'.'.join(H)}.containers.0.name"),
    (RAYCLUSTER, ("spec", "headGroupSpec", "template", "metadata", "labels", "app"), "bad value",
     "spec.headGroupSpec.template.metadata.labels.app"),
    (RAYCLUSTER, (*H, "volumes", 0, "name"), "cache", f"{'.'.join(H)}.containers.0.volumeMounts.0.name"),
    (RAYCLUSTER, (*H, "volumes", 1), {"name": "data", "emptyDir": {}}, f"{'.'.join(H)}.volumes.1.name"),
]


def _lint(capsys, tmp_path, docs):
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    code = main(["--no-cache", "--format", "json", "--select", "GRPO002", str(path)])
    out = capsys.readouterr()
    return code, json.loads(out.out) if out.out.strip().startswith("{") else out


def _with(base, path, value):
    obj = copy.deepcopy(base)
    node = obj
    for p in path[:-1]:
        node = node[p]
    if isinstance(node, list) and path[-1] == len(node):
        node.append(value)
    else:
        node[path[-1]] = value
    return obj


def test_valid_objects_pass(capsys, tmp_path):
    code, out = _lint(capsys, tmp_path, [DEPLOYMENT, POLICY, SERVICE, RAYCLUSTER])
    assert code == 0, out


VALID_EDGES = [
    (DEPLOYMENT, (*C, "env"), [{"name": "a.b-c", "value": "x"}, {"name": "WITH SPACE", "value": "z"}]),
    (DEPLOYMENT, (*C, "imagePullPolicy"), "Always"),
    (DEPLOYMENT, ("spec", "replicas"), 0),
    (DEPLOYMENT, ("spec", "template", "spec", "volumes"), [{"name": "cache", "emptyDir": {}}]),
    (SERVICE, ("spec", "type"), "NodePort"),
    (SERVICE, ("spec", "selector", "app"), ""),
    (SERVICE, ("spec", "ports"), [{"name": "a", "port": 80}, {"name": "b", "port": 81}]),
    (POLICY, ("spec", "ingress", 0, "ports"), [{"port": "metrics"}, {"port": 8000, "endPort": 8100}]),
    (POLICY, ("spec", "policyTypes"), ["Ingress", "Egress"]),
    (POLICY, ("metadata",), {"generateName": "np-", "namespace": "grpo"}),
    # KubeRay adds the /dev/shm volume to each Pod it builds: a mount may name it without declaring it.
    (RAYCLUSTER, (*H, "containers", 0, "volumeMounts"), [{"name": "shared-mem", "mountPath": "/dev/shm"}]),
]


@pytest.mark.parametrize("base,path,value", VALID_EDGES, ids=[f"{'.'.join(map(str, c[1]))}" for c in VALID_EDGES])
def test_valid_edge_passes(capsys, tmp_path, base, path, value):
    """The API server admits these (relaxed env names are GA in v1.34; nodePort only with a type that has one)."""
    obj = _with(base, path, value)
    if path[-1] == "type":
        obj["spec"]["ports"][0]["nodePort"] = 30080
    code, out = _lint(capsys, tmp_path, [obj])
    assert code == 0, out


@pytest.mark.parametrize("base,path,value,where", CASES, ids=[c[3] + "=" + str(c[2])[:20] for c in CASES])
def test_api_server_refusal_at_the_key(capsys, tmp_path, base, path, value, where):
    code, out = _lint(capsys, tmp_path, [_with(base, path, value)])
    assert code == 1, out
    assert any(f["code"] == "GRPO002" and f["key_path"] == where for f in out["findings"]), out["findings"]


STATEFULSET = {
    "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "store", "namespace": "grpo"},
    "spec": {"serviceName": "store", "selector": {"matchLabels": {"app": "store"}}, "template": {
        "metadata": {"labels": {"app": "store"}},
        "spec": {"containers": [{"name": "store", "image": DIGEST,
                                 "volumeMounts": [{"name": "data", "mountPath": "/data"}]}]}},
        "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
            "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]},
}


def test_a_statefulset_mount_may_name_its_claim_template(capsys, tmp_path):
    """The StatefulSet controller gives each Pod one volume per volumeClaimTemplates entry, so a mount may name one;
    without the entry the Pods it makes are refused (the control-plane tier's oracle sends both to the API server)."""
    code, out = _lint(capsys, tmp_path, [STATEFULSET])
    assert code == 0, out
    without = copy.deepcopy(STATEFULSET)
    del without["spec"]["volumeClaimTemplates"]
    code, out = _lint(capsys, tmp_path, [without])
    where = "spec.template.spec.containers.0.volumeMounts.0.name"
    assert code == 1 and any(f["key_path"] == where for f in out["findings"]), out


def test_one_mib_container_command_is_linted_quickly(capsys, tmp_path):
    """A 1 MiB shell script took 49 s (shlex over it, a round-trip YAML parse to locate one finding); it is linted
    and its findings located (bench/input_scale.py measures the time, side by side with the old readers)."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "grpo"},
           "spec": {"containers": [{"name": "c", "image": DIGEST, "command": ["sh", "-c", "echo " + "x" * 2**20]}]}}
    path = tmp_path / "big.yaml"
    path.write_text(yaml.safe_dump(pod))
    code = main(["--no-cache", "--strict", "--format", "json", str(path)])
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert code == 1 and findings and all(f["line"] for f in findings), findings  # the pod's hardening warning


def test_configmap_over_one_mib_is_refused(capsys, tmp_path):
    """ValidateConfigMap: data + binaryData at most 1 MiB (a job ConfigMap of long paths used to lint clean)."""
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "job", "namespace": "grpo"},
          "data": {"job.json": "x" * (2**20 + 1)}}
    code, out = _lint(capsys, tmp_path, [cm])
    assert code == 1 and any(f["key_path"] == "data" for f in out["findings"]), out
    cm["data"]["job.json"] = "x" * (2**20 - 100)
    assert _lint(capsys, tmp_path, [cm])[0] == 0


@pytest.mark.parametrize("kind, field, plain", [("Secret", "data", "stringData"), ("ConfigMap", "binaryData", "data")])
def test_bytes_that_are_not_base64_are_refused(capsys, tmp_path, kind, field, plain):
    """A Secret's data and a ConfigMap's binaryData are bytes the API server decodes from base64: a placeholder left
    there (`YOUR_API_KEY`), or base64 without its padding, is refused at its key; the encoded value (line breaks
    allowed) and the plain text under the text field pass."""
    obj = {"apiVersion": "v1", "kind": kind, "metadata": {"name": "tracker", "namespace": "grpo"}}
    for bad in ("YOUR_API_KEY", "aGk"):
        code, out = _lint(capsys, tmp_path, [{**obj, field: {"api-key": bad}}])
        assert code == 1 and any(f["key_path"] == f"{field}.api-key" and "not base64" in f["message"]
                                 for f in out["findings"]), out
    for good in ({field: {"api-key": "WU9VUl9B\nUElfS0VZ"}}, {plain: {"api-key": "YOUR_API_KEY"}}):
        code, out = _lint(capsys, tmp_path, [{**obj, **good}])
        assert not [f for f in out["findings"] if f["code"] == "GRPO002"], out


@pytest.mark.parametrize("kind", ["Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"])
def test_rbac_names_need_only_be_a_path_segment(capsys, tmp_path, kind):
    """RBAC objects are named like Kubernetes' own (`system:controller:job-controller`): any path segment, colons
    and upper case included (rbac validation's ValidateRBACName); a slash is refused at the name."""
    binding = kind.endswith("Binding")
    obj = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": {"name": "team:Finetune"},
           **({"roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
               "subjects": [{"kind": "ServiceAccount", "name": "trainer", "namespace": "grpo"}]} if binding
              else {"rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]})}
    if not kind.startswith("Cluster"):
        obj["metadata"]["namespace"] = "grpo"
    code, out = _lint(capsys, tmp_path, [obj])
    assert not [f for f in out["findings"] if f["code"] == "GRPO002"], out
    obj["metadata"]["name"] = "team/finetune"
    code, out = _lint(capsys, tmp_path, [obj])
    assert code == 1 and any(f["key_path"] == "metadata.name" and "may not contain '/'" in f["message"]
                             for f in out["findings"]), out
