"""Pod security of the Ray pods and the sandbox, on every shipped values file, and grpo-lint's pod-security
rules (GRPO810-GRPO817) clean on every rendered release.

Failures these prevent (the hardening review): Ray head and workers with no securityContext, the default
service-account token, the whole FSx volume writable and the dashboard on 0.0.0.0 with no NetworkPolicy;
the sandbox as root with a writable root filesystem and default capabilities; `privileged: true` with no way
to place the sandbox on a dedicated node group.
"""

from __future__ import annotations

import posixpath

import pytest
from grpo_stack.render import RenderError, job_spec

from tests.conftest import NAMESPACE, RELEASE

DEDICATED = {"nodeSelector": {"grpo-stack/sandbox": "true"},
             "tolerations": [{"key": "grpo-stack/sandbox", "operator": "Exists", "effect": "NoSchedule"}]}


def raycluster(rendered) -> dict:
    (rc,) = rendered.of_kind("RayCluster")
    return rc.obj


def ray_pods(rendered) -> list[tuple[str, dict]]:
    spec = raycluster(rendered)["spec"]
    return [("head", spec["headGroupSpec"]["template"]["spec"])] + [
        (g["groupName"], g["template"]["spec"]) for g in spec["workerGroupSpecs"]]


def sandbox(rendered) -> dict:
    (d,) = [o.obj for o in rendered.of_kind("Deployment") if o.name == f"{RELEASE}-sandbox-fusion"]
    return d["spec"]["template"]["spec"]


def test_ray_pods_have_no_token_and_runtime_default_seccomp(values_name, rendered_all):
    for group, pod in ray_pods(rendered_all[values_name]):
        assert pod["automountServiceAccountToken"] is False, group
        assert pod["securityContext"]["seccompProfile"]["type"] == "RuntimeDefault", group


def test_ray_containers_drop_every_capability_but_ipc_lock_on_efa_workers(values_name, rendered_all,
                                                                           shipped_values):
    efa = int(shipped_values[values_name]["global"]["cluster"].get("efaPerNode", 16)) > 0
    for group, pod in ray_pods(rendered_all[values_name]):
        for c in pod["containers"]:
            sc = c["securityContext"]
            assert sc["allowPrivilegeEscalation"] is False and sc["privileged"] is False, group
            assert sc["capabilities"]["drop"] == ["ALL"], group
            want = ["IPC_LOCK"] if group != "head" and efa else []
            assert sc["capabilities"].get("add", []) == want, group


def test_no_ipc_lock_without_efa(render_values):
    rendered = render_values("qwen3-8b", {"global.cluster.efaPerNode": 0})
    for group, pod in ray_pods(rendered):
        assert "add" not in pod["containers"][0]["securityContext"]["capabilities"], group


def _mounts(pod: dict) -> list[dict]:
    claims = {v["name"] for v in pod["volumes"] if "persistentVolumeClaim" in v}
    return [m for m in pod["containers"][0]["volumeMounts"] if m["name"] in claims]


def test_fsx_read_only_except_the_job_writable_paths(values_name, rendered_all, shipped_values):
    """The volume root is read-only; the only writable mounts are subPaths named by global.job."""
    job = shipped_values[values_name]["global"]["job"]
    mount = shipped_values[values_name]["global"].get("storage", {}).get("mountPath", "/fsx")
    want = {job["trainer"]["checkpointDir"]}
    if job["framework"] == "miles":
        want.add(job["model"]["path"] + "_torch_dist")
    for group, pod in ray_pods(rendered_all[values_name]):
        mounts = _mounts(pod)
        root = [m for m in mounts if m["mountPath"] == mount]
        assert root and all(m.get("readOnly") is True and "subPath" not in m for m in root), group
        writable = [m for m in mounts if not m.get("readOnly")]
        assert {m["subPath"] for m in writable} == want, group
        assert all(m["mountPath"] == posixpath.join(mount, m["subPath"]) for m in writable), group


def _writes(built) -> list[str]:
    """Every path the built job writes: the checkpoint root and each preparation step's output."""
    keys = {"trainer.default_local_dir", "save"}
    paths = [str(a.value) for a in built.args if a.key in keys]
    paths += [str(step.output) for step in getattr(built, "prepare", ())]
    return paths


def test_every_path_the_job_writes_is_on_a_writable_mount(values_name, rendered_all):
    """Checked against the one job builder (what the in-pod submit runs), not a copy of its paths."""
    from grpo_stack.job import build

    rendered = rendered_all[values_name]
    built = build(job_spec(rendered))
    writes = _writes(built)
    assert writes, "the builder names no checkpoint path"
    for group, pod in ray_pods(rendered):
        writable = [m["mountPath"] for m in _mounts(pod) if not m.get("readOnly")]
        for path in writes:
            assert any(path == w or path.startswith(w + "/") for w in writable), (group, path, writable)


def test_model_and_data_are_not_writable(values_name, rendered_all, shipped_values):
    g = shipped_values[values_name]["global"]
    mount = g.get("storage", {}).get("mountPath", "/fsx")
    reads = [g["job"]["model"]["path"], *g["job"]["data"]["trainFiles"], *g["job"]["data"]["valFiles"]]
    for group, pod in ray_pods(rendered_all[values_name]):
        writable = [m["mountPath"] for m in _mounts(pod) if not m.get("readOnly")]
        for rel in reads:
            path = posixpath.join(mount, rel)
            assert not any(path == w or path.startswith(w + "/") for w in writable), (group, path)


def test_dashboard_listens_on_localhost_by_default(values_name, rendered_all):
    params = raycluster(rendered_all[values_name])["spec"]["headGroupSpec"]["rayStartParams"]
    assert params["dashboard-host"] == "127.0.0.1"


# --- sandbox ------------------------------------------------------------------------------------------------

def test_sandbox_read_only_root_no_capabilities_scratch_in_emptydirs(render_values):
    pod = sandbox(render_values("qwen3-235b"))
    c = pod["containers"][0]
    sc = c["securityContext"]
    assert sc["readOnlyRootFilesystem"] is True and sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"] == {"drop": ["ALL"]}
    vols = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["mountPath"]: vols[m["name"]] for m in c["volumeMounts"]}
    assert set(mounts) == {"/tmp", "/root/.cache"}
    assert all("emptyDir" in v and v["emptyDir"].get("sizeLimit") for v in mounts.values())
    env = {e["name"]: e.get("value") for e in c["env"]}
    assert env["_BYTEFAAS_RUNTIME_PORT"] == str(c["ports"][0]["containerPort"])


def test_privileged_sandbox_without_dedicated_nodes_is_refused(render_values):
    """privileged: true alone is a values error naming the missing keys (Helm's schema check)."""
    with pytest.raises(RenderError, match="dedicatedNodes"):
        render_values("qwen3-235b", {"sandbox-fusion.privileged": True})


def test_privileged_sandbox_lands_on_the_dedicated_nodes(render_values):
    pod = sandbox(render_values("qwen3-235b", {"sandbox-fusion.privileged": True,
                                               "sandbox-fusion.dedicatedNodes": DEDICATED}))
    assert pod["nodeSelector"]["grpo-stack/sandbox"] == "true"
    assert pod["nodeSelector"]["node.kubernetes.io/instance-type"]
    assert pod["tolerations"] == DEDICATED["tolerations"]


def test_typed_model_refuses_privileged_without_dedicated_nodes():
    from grpo_stack.schema.components import SandboxFusion
    from pydantic import ValidationError

    base = {"image": {"repository": "r", "tag": "t", "digest": ""}, "replicas": 1, "instanceType": "m6i.4xlarge",
            "resources": {"cpu": "1", "memory": "1Gi"}, "privileged": True,
            "dedicatedNodes": {"nodeSelector": {}, "tolerations": []}, "readOnlyRootFilesystem": True,
            "scratchSize": "1Gi", "antiAffinity": "required",
            "pod": {"nodeSelector": {}, "nodeAffinity": [], "tolerations": [], "annotations": {}, "labels": {},
                    "priorityClassName": "", "serviceAccountName": ""}}
    with pytest.raises(ValidationError, match="dedicatedNodes"):
        SandboxFusion.model_validate(base)
    SandboxFusion.model_validate({**base, "dedicatedNodes": DEDICATED})


# --- grpo-lint on what the chart renders -----------------------------------------------------------------------

def test_grpo_lint_clean_on_every_rendered_release(values_name, rendered_all, tmp_path, raycluster_crd):
    """grpo-lint on the chart's own output read as plain manifests (RayCluster pod templates included, which
    checkov never inspects, and the KubeRay CRD schema): no finding of any code or severity, so none is
    unjustified."""
    from grpo_stack.lint.release import lint_manifests
    from grpo_stack.lint.suppress import LintConfig

    crd = raycluster_crd
    stream = tmp_path / f"{values_name}.yaml"
    stream.write_text("".join(f"---\n{text}\n" for text in rendered_all[values_name].manifests.values()))
    # held to each pod-hardening rule, as the chart's output is in values mode
    result = lint_manifests(str(stream), namespace=NAMESPACE, kuberay_crd=str(crd),
                            config=LintConfig(settings={"pod-hardening": {"each": True}}))
    assert not result.input_errors, [str(e) for e in result.input_errors]
    found = [f"{f.code} {f.severity} {f.key_path}: {f.message}" for f in result.findings]
    assert not found, "\n".join(found)


def test_grpo_lint_pod_rules_fire_on_the_predecessor_ray_pods(render_values, tmp_path):
    """The same rules on an unhardened RayCluster: the checks are live, not vacuous."""
    import yaml
    from grpo_stack.lint.release import lint_manifests
    from grpo_stack.lint.suppress import LintConfig

    rc = raycluster(render_values("qwen3-8b"))
    for _, pod in [("head", rc["spec"]["headGroupSpec"]["template"]["spec"])] + [
            (g["groupName"], g["template"]["spec"]) for g in rc["spec"]["workerGroupSpecs"]]:
        pod.pop("automountServiceAccountToken")
        pod.pop("securityContext")
        for c in pod["containers"]:
            c.pop("securityContext")
            for m in c["volumeMounts"]:
                m.pop("readOnly", None)
    rc["spec"]["headGroupSpec"]["rayStartParams"]["dashboard-host"] = "0.0.0.0"
    path = tmp_path / "old.yaml"
    path.write_text(yaml.safe_dump(rc))
    # the chart's own output is held to each hardening rule (on other manifests they fold into GRPO809)
    each = LintConfig(settings={"pod-hardening": {"each": True}})
    codes = {f.code for f in lint_manifests(str(path), namespace=NAMESPACE, config=each).findings}
    assert {"GRPO810", "GRPO811", "GRPO812", "GRPO813", "GRPO814", "GRPO816", "GRPO817"} <= codes, codes
