"""GRPO817 ray-dashboard-exposed."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity
from ._podsecurity import reached_from_other_namespaces

CODE = "GRPO817"
NAME = "ray-dashboard-exposed"
SEVERITY = Severity.WARNING
CATEGORY = "security"
SUMMARY = "The Ray dashboard and job API listen on every interface and may be reached from outside the namespace."
DOC = """## What it does
For each RayCluster (and each RayJob's cluster) whose head binds the dashboard to every interface
(`dashboard-host` unset, which KubeRay turns into 0.0.0.0, or set to 0.0.0.0), checks the NetworkPolicies
selecting the head: the dashboard port (8265) must be admitted from nothing wider than pods of the same
namespace. No ingress policy at all, a rule with no `from`, a `namespaceSelector` or an `ipBlock` peer on that
port is reported. The policy KubeRay creates from `spec.networkPolicy.mode` (`DenyAll`, `DenyAllIngress`: the
cluster's own pods plus the head's `ingressRules`) counts like one in the manifests.

## Why is this bad?
The Ray job API on the dashboard port runs any command it is sent, with the head's environment: the
Hugging Face token, the FSx volume, the cluster's network. Ray has no authentication on it.

## Example
```yaml
headGroupSpec:
  rayStartParams: {dashboard-host: "0.0.0.0"}
```
Use instead:
```yaml
headGroupSpec:
  rayStartParams: {dashboard-host: "127.0.0.1"}   # kubectl port-forward still reaches it
```

## Fix
Bind the dashboard to 127.0.0.1 (grpo-stack's default; `raycluster.dashboard.exposed: false`) or admit its
port only from pods of the release namespace.
"""

DASHBOARD_PORT = 8265
LOCAL = {"127.0.0.1", "localhost", "::1"}


def check(ctx) -> Iterator[Hit]:
    for o in ctx.of_kind("RayCluster", "RayJob"):
        prefix = "spec.rayClusterSpec" if o.kind == "RayJob" else "spec"  # job mode: the RayJob's cluster
        spec = (o.obj.get("spec") or {}).get("rayClusterSpec") if o.kind == "RayJob" else o.obj.get("spec")
        head = (spec or {}).get("headGroupSpec") or {}
        host = str((head.get("rayStartParams") or {}).get("dashboard-host", "0.0.0.0"))
        if host in LOCAL:
            continue
        pod_path = f"{prefix}.headGroupSpec.template.spec"
        reason = reached_from_other_namespaces(ctx, o, pod_path, DASHBOARD_PORT, {"dashboard"}, pod="the head")
        if reason:
            yield Hit(f"{prefix}.headGroupSpec.rayStartParams", f"{o.kind} {o.name}: the dashboard listens on {host}:"
                      f"{DASHBOARD_PORT} and {reason}", obj=o)
