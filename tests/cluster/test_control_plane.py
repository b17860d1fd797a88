"""The control plane itself: every component healthy, the versions it was built from, kwok nodes with the
catalogue's capacity, the namespace prerequisites a user creates before `helm install`."""

from __future__ import annotations

import json

from grpo_stack.catalog.instances import lookup
from grpo_stack.localcluster import binaries
from grpo_stack.localcluster.nodes import EFA_RESOURCE, GPU_RESOURCE, INSTANCE_TYPE_LABEL
from grpo_stack.localcluster.prerequisites import chart_globals

from tests.cluster.releases import prepare_namespace

COMPONENTS = {"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok", "service-proxy",
              "kuberay-operator"}


def test_every_component_answers_its_health_endpoint(control_plane):
    assert {c.name for c in control_plane.components} == COMPONENTS
    assert control_plane.health() == {name: 200 for name in COMPONENTS}


def test_api_server_reports_the_pinned_kubernetes_version(control_plane):
    """The API server reports the k8s.io/kubernetes version cluster-tools/kubernetes/go.mod pins (Helm reads it
    for `kubeVersion` and `.Capabilities`)."""
    version = json.loads(control_plane.kubectl("version", "-o", "json").stdout)["serverVersion"]
    assert version["gitVersion"] == binaries.versions()["kubernetes"]


def test_kwok_nodes_advertise_the_catalogue_capacity(control_plane):
    """A kwok node of a GPU type is Ready with the catalogue's allocatable CPU, memory, GPUs and EFA, and the
    taint GPU node groups carry."""
    name = control_plane.ensure_nodes("p5en.48xlarge", 1)[0]
    node = control_plane.get("node", name)
    row = lookup("p5en.48xlarge")
    alloc = node["status"]["allocatable"]
    assert alloc["cpu"] == f"{row.allocatable_millicpu}m"
    assert alloc["memory"] == f"{row.allocatable_memory_mib}Mi"
    assert alloc[GPU_RESOURCE] == str(row.gpus) and alloc[EFA_RESOURCE] == str(row.efa)
    assert node["metadata"]["labels"][INSTANCE_TYPE_LABEL] == "p5en.48xlarge"
    assert any(t["key"] == GPU_RESOURCE and t["effect"] == "NoSchedule" for t in node["spec"]["taints"])
    ready = [c for c in node["status"]["conditions"] if c["type"] == "Ready"]
    assert ready and ready[0]["status"] == "True"


def test_namespace_prerequisites_are_in_place(control_plane):
    """The `hf-token` Secret and the FSx PVC (Bound to its static PV by the controller manager) the chart names in
    global.secrets / global.storage; the KubeRay CRDs established with the v1.7.0 schema."""
    prepare_namespace(control_plane, "prereq-check")
    g = chart_globals()
    secret = control_plane.get("-n", "prereq-check", "secret", g["secrets"]["hfToken"]["name"])
    assert g["secrets"]["hfToken"]["key"] in secret["data"]
    pvc = control_plane.get("-n", "prereq-check", "pvc", g["storage"]["claimName"])
    assert pvc["status"]["phase"] == "Bound" and "ReadWriteMany" in pvc["status"]["accessModes"]
    crd = control_plane.get("crd", "rayclusters.ray.io")
    schema = next(v for v in crd["spec"]["versions"] if v["name"] == "v1")["schema"]["openAPIV3Schema"]
    assert "upgradeStrategy" in schema["properties"]["spec"]["properties"]
    control_plane.kubectl("delete", "namespace", "prereq-check", "--wait=false")


def _unknown_fields(obj, schema: dict, prefix: str = "") -> set[str]:
    """Paths of `obj` that `schema` (a CRD's structural schema) has no property for; maps stop the walk."""
    if isinstance(obj, list):
        return {p for v in obj for p in _unknown_fields(v, schema.get("items") or {}, f"{prefix}[]")}
    if not isinstance(obj, dict) or "properties" not in schema:
        return set()
    out = set()
    for key, value in obj.items():
        if key in schema["properties"]:
            out |= _unknown_fields(value, schema["properties"][key], f"{prefix}.{key}")
        else:
            out.add(f"{prefix}.{key}")
    return out


def _v1_schema(crd: dict) -> dict:
    return next(v for v in crd["spec"]["versions"] if v["name"] == "v1")["schema"]["openAPIV3Schema"]


def test_the_only_rendered_field_the_served_operator_lacks_is_upgrade_strategy(control_plane, helm_bin, helm_env):
    """docs/control-plane.md's claim, measured: of every field the chart renders into a RayCluster (every shipped
    values file), the served operator's own CRD (v1.5.0) lacks only `spec.upgradeStrategy`; the v1.7.0 schema this
    API server serves has them all."""
    import subprocess

    import yaml
    from grpo_stack.localcluster.crds import kuberay_crds

    from tests.cluster.releases import CHART, REPO_ROOT

    module_crds = control_plane.tools / "kuberay-crds"
    v15 = _v1_schema(yaml.safe_load((module_crds / "ray.io_rayclusters.yaml").read_text()))
    v17 = _v1_schema(next(c for c in kuberay_crds(module_crds) if c["spec"]["names"]["kind"] == "RayCluster"))
    clusters = []
    for values in sorted((REPO_ROOT / "values").glob("*.yaml")):
        out = subprocess.run([str(helm_bin), "template", "grpo", str(CHART), "-f", str(values)], env=helm_env,
                             capture_output=True, text=True, check=True).stdout
        clusters += [d for d in yaml.safe_load_all(out) if d and d.get("kind") == "RayCluster"]
    assert clusters, "no shipped values file renders a RayCluster"
    for cluster in clusters:
        assert _unknown_fields(cluster, v17) == set()
        assert _unknown_fields(cluster, v15) == {".spec.upgradeStrategy"}
