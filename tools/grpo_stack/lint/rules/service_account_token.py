"""GRPO813 service-account-token."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity
from ._podsecurity import pod_label

CODE = "GRPO813"
NAME = "service-account-token"
SEVERITY = Severity.ERROR
SUMMARY = "A pod mounts a service-account token although nothing in it calls the Kubernetes API."
DOC = """## What it does
Requires `automountServiceAccountToken: false` on every pod template, RayCluster groups included. The one
exception is a RayCluster head with `enableInTreeAutoscaling: true`: KubeRay's autoscaler sidecar scales the
worker groups through the API.

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
    for o, pod_path, pod in ctx.pod_templates():
        if (o.kind == "RayCluster" and ".headGroupSpec." in pod_path
                and (o.obj.get("spec") or {}).get("enableInTreeAutoscaling") is True):
            continue
        if pod.get("automountServiceAccountToken") is not False:
            yield Hit(pod_path, f"{pod_label(o, pod_path)} mounts a service-account token", obj=o)
