"""The API server's PodSecurity admission as the oracle for GRPO867 (pod-security-enforced).

Two namespaces of the local control plane enforce `restricted` and `baseline` (at v1.34, as
`ControlPlane.create_namespace` labels them). Each pod variant below, a compliant pod with one thing changed (and
valid edge cases beside them), is sent to the namespace as a server-side dry run and linted as a manifest together
with a Namespace object carrying the same labels. The API server refuses a variant exactly when grpo-lint reports
GRPO867 on it. Where the check stops: the pods are bare Pods; a Deployment's pods are refused the same way by the
same admission when its controller creates them, which the dry run of a Deployment does not reach.
"""

from __future__ import annotations

import copy
import tempfile
from pathlib import Path

import pytest
import yaml
from grpo_stack.lint.release import lint_manifests
from kubernetes.dynamic.exceptions import ApiException

from tests.cluster.kube_api import Kube

IMAGE = "registry.k8s.io/pause:3.10"
RESTRICTED_POD = {
    "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
    "containers": [{"name": "c", "image": IMAGE,
                    "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}}],
}
PLAIN_POD = {"containers": [{"name": "c", "image": IMAGE}]}


def _c(pod: dict) -> dict:
    return pod["containers"][0].setdefault("securityContext", {})


# (name, level, starting pod, change): `change` edits a deep copy of the starting pod in place.
VARIANTS = [
    ("valid: compliant", "restricted", RESTRICTED_POD, lambda p: None),
    ("valid: seccomp per container", "restricted", RESTRICTED_POD,
     lambda p: (p["securityContext"].pop("seccompProfile"), _c(p).update(seccompProfile={"type": "RuntimeDefault"}))),
    ("valid: runAsNonRoot per container", "restricted", RESTRICTED_POD,
     lambda p: (p["securityContext"].pop("runAsNonRoot"), _c(p).update(runAsNonRoot=True))),
    ("valid: adds NET_BIND_SERVICE", "restricted", RESTRICTED_POD,
     lambda p: _c(p)["capabilities"].update(add=["NET_BIND_SERVICE"])),
    ("valid: runAsUser 1000", "restricted", RESTRICTED_POD, lambda p: p["securityContext"].update(runAsUser=1000)),
    ("valid: allowed volume types", "restricted", RESTRICTED_POD, lambda p: p.update(volumes=[
        {"name": "a", "emptyDir": {}}, {"name": "b", "persistentVolumeClaim": {"claimName": "x"}},
        {"name": "d", "configMap": {"name": "x"}}, {"name": "e", "csi": {"driver": "x.example.com"}}])),
    ("no seccomp profile", "restricted", RESTRICTED_POD, lambda p: p["securityContext"].pop("seccompProfile")),
    ("pod seccomp Unconfined", "restricted", RESTRICTED_POD,
     lambda p: p["securityContext"].update(seccompProfile={"type": "Unconfined"})),
    ("allowPrivilegeEscalation unset", "restricted", RESTRICTED_POD,
     lambda p: _c(p).pop("allowPrivilegeEscalation")),
    ("allowPrivilegeEscalation true", "restricted", RESTRICTED_POD,
     lambda p: _c(p).update(allowPrivilegeEscalation=True)),
    ("runAsNonRoot unset", "restricted", RESTRICTED_POD, lambda p: p["securityContext"].pop("runAsNonRoot")),
    ("runAsNonRoot false in the container", "restricted", RESTRICTED_POD, lambda p: _c(p).update(runAsNonRoot=False)),
    ("runAsUser 0", "restricted", RESTRICTED_POD, lambda p: _c(p).update(runAsUser=0)),
    ("capabilities not dropped", "restricted", RESTRICTED_POD, lambda p: _c(p).pop("capabilities")),
    ("adds CHOWN", "restricted", RESTRICTED_POD, lambda p: _c(p)["capabilities"].update(add=["CHOWN"])),
    ("nfs volume", "restricted", RESTRICTED_POD,
     lambda p: p.update(volumes=[{"name": "shared", "nfs": {"server": "10.0.0.2", "path": "/x"}}])),
    ("init container may escalate", "restricted", RESTRICTED_POD,
     lambda p: p.update(initContainers=[{"name": "i", "image": IMAGE, "securityContext": {
         "capabilities": {"drop": ["ALL"]}}}])),
    ("valid: plain pod", "baseline", PLAIN_POD, lambda p: None),
    ("valid: adds CHOWN", "baseline", PLAIN_POD, lambda p: _c(p).update(capabilities={"add": ["CHOWN"]})),
    ("adds SYS_ADMIN", "baseline", PLAIN_POD, lambda p: _c(p).update(capabilities={"add": ["SYS_ADMIN"]})),
    ("privileged", "baseline", PLAIN_POD, lambda p: _c(p).update(privileged=True)),
    ("hostNetwork", "baseline", PLAIN_POD, lambda p: p.update(hostNetwork=True)),
    ("hostPID", "baseline", PLAIN_POD, lambda p: p.update(hostPID=True)),
    ("hostIPC", "baseline", PLAIN_POD, lambda p: p.update(hostIPC=True)),
    ("hostPath volume", "baseline", PLAIN_POD,
     lambda p: p.update(volumes=[{"name": "h", "hostPath": {"path": "/var/data"}}])),
    ("hostPort", "baseline", PLAIN_POD, lambda p: p["containers"][0].update(ports=[
        {"containerPort": 8080, "hostPort": 8080}])),
    ("container seccomp Unconfined", "baseline", PLAIN_POD,
     lambda p: _c(p).update(seccompProfile={"type": "Unconfined"})),
]
NAMESPACES = {"restricted": "psa-restricted", "baseline": "psa-baseline"}


@pytest.fixture(scope="module")
def enforcing(control_plane):
    for level, name in NAMESPACES.items():
        control_plane.create_namespace(name, enforce=level, warn=level)
    kube = Kube(control_plane.kubeconfig)
    try:
        yield kube
    finally:
        for name in NAMESPACES.values():
            kube.delete("v1", "Namespace", name)
        kube.close()


def refused(kube: Kube, pod: dict, namespace: str) -> bool:
    try:
        kube.create(pod, namespace, dry_run=True)
        return False
    except ApiException as exc:
        assert exc.status in (400, 403, 422), exc.body
        return True


def reported(pod: dict, level: str, namespace: str, folder: Path) -> bool:
    """GRPO867 on the Pod linted beside a Namespace labelled as the control plane's."""
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace, "labels": {
        "pod-security.kubernetes.io/enforce": level, "pod-security.kubernetes.io/enforce-version": "v1.34"}}}
    path = folder / f"{namespace}-{len(list(folder.iterdir()))}.yaml"
    path.write_text(yaml.safe_dump_all([ns, pod], sort_keys=False))
    return any(f.code == "GRPO867" for f in lint_manifests(str(path)).findings)


def test_pod_security_admission_agrees_with_grpo867(enforcing):
    folder = Path(tempfile.mkdtemp(prefix="psa-oracle-"))
    disagreements = []
    for name, level, start, change in VARIANTS:
        spec = copy.deepcopy(start)
        change(spec)
        namespace = NAMESPACES[level]
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "psa-probe", "namespace": namespace},
               "spec": spec}
        api, lint = refused(enforcing, pod, namespace), reported(pod, level, namespace, folder)
        if api != lint or name.startswith("valid:") == api:
            disagreements.append(f"{level} / {name}: API {'refuses' if api else 'admits'}, "
                                 f"grpo-lint {'reports' if lint else 'passes'}")
    assert not disagreements, "\n".join(disagreements)
