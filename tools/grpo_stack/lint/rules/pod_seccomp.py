"""GRPO810 pod-seccomp."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity
from ._podsecurity import all_containers, pod_label, where

CODE = "GRPO810"
NAME = "pod-seccomp"
SEVERITY = Severity.ERROR
SUMMARY = "A pod (RayCluster head and worker groups included) runs without a seccomp profile."
DOC = """## What it does
For every pod template the objects create (Deployments, Jobs, Pods, and each RayCluster head and worker group),
requires the RuntimeDefault (or a Localhost) seccomp profile: on the pod's securityContext, or on every
container of a pod that sets none. An explicit `Unconfined` is reported even where the pod sets a profile, and so
is an `appArmorProfile` of type `Unconfined` (on the pod or the container): it lifts the runtime's default
AppArmor confinement the same way.

## Why is this bad?
Without a profile the container runtime applies none (Kubernetes' default is Unconfined), so every syscall is
reachable from the process, including the ones container escapes use. checkov checks this on Deployments but
never looks inside a RayCluster, where the training pods (and their GPUs, EFA and FSx) are.

## Example
```yaml
kind: RayCluster
spec:
  headGroupSpec:
    template:
      spec:
        containers: [{name: ray-head, image: ...}]
```
Use instead:
```yaml
      spec:
        securityContext:
          seccompProfile: {type: RuntimeDefault}
```

## Fix
Set `securityContext.seccompProfile.type: RuntimeDefault` on the pod (the grpo-stack charts do, through
grpo-common.podSecurityContext).
"""

ALLOWED = {"RuntimeDefault", "Localhost"}


def _profile(sc: dict | None) -> str | None:
    return ((sc or {}).get("seccompProfile") or {}).get("type")


def check(ctx) -> Iterator[Hit]:
    for o, pod_path, pod in ctx.pod_templates():
        pod_profile = _profile(pod.get("securityContext"))
        for field, i, c in all_containers(pod):
            own = _profile(c.get("securityContext"))
            effective = own or pod_profile
            if effective not in ALLOWED:
                path = f"{where(pod_path, field, i)}.securityContext" if own else pod_path
                what = f"seccomp profile {effective}" if effective else "no seccomp profile"
                yield Hit(path, f"{pod_label(o, pod_path)}: container {c.get('name')} runs with {what}", obj=o)
            own_aa = _apparmor(c.get("securityContext"))
            if (own_aa or _apparmor(pod.get("securityContext"))) == "Unconfined":
                path = f"{where(pod_path, field, i)}.securityContext" if own_aa else pod_path
                yield Hit(path, f"{pod_label(o, pod_path)}: container {c.get('name')} runs with AppArmor "
                          "Unconfined", obj=o)


def _apparmor(security_context) -> str | None:
    """appArmorProfile.type of a pod or container securityContext (Kubernetes 1.30+), if any."""
    profile = security_context.get("appArmorProfile") if isinstance(security_context, dict) else None
    kind = profile.get("type") if isinstance(profile, dict) else None
    return str(kind) if kind else None
