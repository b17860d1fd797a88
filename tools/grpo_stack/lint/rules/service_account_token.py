"""GRPO813 service-account-token."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity
from ._objects import values_section
from ._podsecurity import folded, pod_label
from ._rbac import pod_account

CODE = "GRPO813"
NAME = "service-account-token"
SEVERITY = Severity.ERROR
CATEGORY = "hardening"
SUMMARY = "A pod mounts a service-account token although nothing in it calls the Kubernetes API."
DOC = """## What it does
Requires `automountServiceAccountToken: false` on every pod template, RayCluster groups included. Three
exceptions: a Ray head whose cluster (RayCluster, RayJob or RayService) sets `enableInTreeAutoscaling: true` —
KubeRay's autoscaler sidecar scales the worker groups through the API — and a pod running under a named
service account (not `default`) that a RoleBinding or ClusterRoleBinding of the set grants a role: the set says
that pod calls the API; and in a values file, a pod whose `pod.serviceAccountName` names its account (an IRSA or
EKS Pod Identity role was asked for; GRPO821 refuses it on pods that run model-written code).

## Why is this bad?
No grpo-stack pod calls the API server: the recipe reaches the Ray head with `kubectl exec` from outside, the
services answer HTTP. A mounted token turns any code execution in the pod (a reward function, a rollout, a
dependency) into API access with the namespace's default service account.

## Example
```yaml
spec:
  headGroupSpec:
    template:
      spec:
        containers: [...]
```
Use instead:
```yaml
      spec:
        automountServiceAccountToken: false
```

## Fix
Set `automountServiceAccountToken: false` on the pod spec.
"""


def check(ctx) -> Iterator[Hit]:
    return iter(()) if folded(ctx) else hits(ctx)


def hits(ctx) -> Iterator[Hit]:
    """Every pod template's findings, whatever the mode (GRPO809 folds them per pod in manifest mode)."""
    bound = _bound_accounts(ctx)
    for o, pod_path, pod in ctx.pod_templates():
        if ".headGroupSpec." in f".{pod_path}." and _autoscaled(o.obj, pod_path):
            continue
        account = pod_account(pod)
        if account != "default" and account in bound:
            continue  # the set grants this account API access: the pod is meant to call the API
        if account != "default" and _identity_asked(ctx, o, pod_path, account):
            continue
        if pod.get("automountServiceAccountToken") is not False:
            yield Hit(pod_path, f"{pod_label(o, pod_path)} mounts a service-account token", obj=o)


def _identity_asked(ctx, o, pod_path: str, account: str) -> bool:
    """The values name this pod's service account (`<component>.pod.serviceAccountName`): an identity."""
    section = values_section(ctx, o, pod_path)
    return bool(section) and not o.is_test_hook and ctx.get(f"{section}.pod.serviceAccountName") == account


def _autoscaled(obj: dict, pod_path: str) -> bool:
    """enableInTreeAutoscaling on the cluster spec holding this head (RayCluster, RayJob, RayService)."""
    node = obj
    for part in pod_path.split(".headGroupSpec.")[0].split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return isinstance(node, dict) and node.get("enableInTreeAutoscaling") is True


def _bound_accounts(ctx) -> set[str]:
    """The name of every ServiceAccount a RoleBinding or ClusterRoleBinding of the set names as a subject."""
    out = set()
    for b in ctx.of_kind("RoleBinding", "ClusterRoleBinding"):
        subjects = b.obj.get("subjects")
        for subject in subjects if isinstance(subjects, list) else []:
            if isinstance(subject, dict) and subject.get("kind") == "ServiceAccount" and subject.get("name"):
                out.add(str(subject["name"]))
    return out
