"""GRPO810 pod-seccomp."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..context import node_at
from ..finding import Hit, Severity
from ._podsecurity import all_containers, folded, pod_label, seccomp_type, where

CODE = "GRPO810"
NAME = "pod-seccomp"
SEVERITY = Severity.ERROR
CATEGORY = "hardening"
SUMMARY = "A pod (RayCluster head and worker groups included) runs without a seccomp profile, or AppArmor unconfined."
DOC = """## What it does
For every pod template the objects create (Deployments, Jobs, Pods, and each RayCluster head and worker group),
requires the RuntimeDefault (or a Localhost) seccomp profile: on the pod's securityContext, or on every
container of a pod that sets none. An explicit `Unconfined` is reported even where the pod sets a profile.
AppArmor switched off is reported the same way, by either route: `appArmorProfile: {type: Unconfined}` on the
pod or a container, or the older annotation `container.apparmor.security.beta.kubernetes.io/<container>:
unconfined` on the pod template.

## Why is this bad?
Without a profile the container runtime applies none (Kubernetes' default is Unconfined), so every syscall is
reachable from the process, including the ones container escapes use; an unconfined AppArmor profile removes the
runtime's file and mount restrictions the same way. checkov checks this on Deployments but
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


APPARMOR_ANNOTATION = "container.apparmor.security.beta.kubernetes.io/"


def _apparmor(sc: Any) -> str | None:
    profile = sc.get("appArmorProfile") if isinstance(sc, dict) else None
    return profile.get("type") if isinstance(profile, dict) else None


def check(ctx) -> Iterator[Hit]:
    return iter(()) if folded(ctx) else hits(ctx)


def hits(ctx) -> Iterator[Hit]:
    """Every pod template's findings, whatever the mode (GRPO809 folds them per pod in manifest mode)."""
    for o, pod_path, pod in ctx.pod_templates():
        sc = pod.get("securityContext") if isinstance(pod.get("securityContext"), dict) else {}
        pod_profile = seccomp_type(sc)
        pod_apparmor = _apparmor(sc)
        meta_path = pod_path.rsplit(".", 1)[0] + ".metadata" if "." in pod_path else "metadata"
        meta = node_at(o.obj, meta_path)
        annotations = meta.get("annotations") if isinstance(meta, dict) else None
        annotations = annotations if isinstance(annotations, dict) else {}
        for field, i, c in all_containers(pod):
            own = seccomp_type(c.get("securityContext"))
            effective = own or pod_profile
            if effective not in ALLOWED:
                path = (f"{where(pod_path, field, i)}.securityContext" if own
                        else f"{pod_path}.securityContext.seccompProfile" if pod_profile else pod_path)
                what = f"seccomp profile {effective}" if effective else "no seccomp profile"
                yield Hit(path, f"{pod_label(o, pod_path)}: container {c.get('name')} runs with {what}", obj=o)
            own_apparmor = _apparmor(c.get("securityContext"))
            annotated = str(annotations.get(f"{APPARMOR_ANNOTATION}{c.get('name')}", "")).strip().lower()
            if (own_apparmor or pod_apparmor) == "Unconfined":
                path = (f"{where(pod_path, field, i)}.securityContext" if own_apparmor
                        else f"{pod_path}.securityContext.appArmorProfile")
                yield Hit(path, f"{pod_label(o, pod_path)}: container {c.get('name')} runs with AppArmor "
                          "Unconfined", obj=o, remediation="set appArmorProfile.type: RuntimeDefault (or drop it)")
            elif annotated == "unconfined":
                yield Hit(f"{meta_path}.annotations", f"{pod_label(o, pod_path)}: container {c.get('name')} runs "
                          f"with AppArmor unconfined ({APPARMOR_ANNOTATION}{c.get('name')})", obj=o,
                          remediation="set the annotation to runtime/default (or drop it)")
