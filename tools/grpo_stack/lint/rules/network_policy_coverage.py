"""GRPO816 network-policy-coverage."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity
from ._podsecurity import folded, pod_label, policies_selecting, policy_types

CODE = "GRPO816"
NAME = "network-policy-coverage"
SEVERITY = Severity.ERROR
CATEGORY = "hardening"
SUMMARY = "A pod is not isolated: no NetworkPolicy selects it for both ingress and egress."
DOC = """## What it does
For every pod template (RayCluster groups and helm test pods included), requires NetworkPolicies in its
namespace that select its labels (the ones KubeRay adds to Ray pods included) and, together, isolate both
directions: `Ingress` and `Egress` in their policyTypes. A RayCluster (or RayJob/RayService cluster spec) with
`networkPolicy.mode` counts as the policies the KubeRay operator creates from it: `DenyAll` isolates both
directions, `DenyAllIngress` and `DenyAllEgress` one each.

## Why is this bad?
A pod no policy selects accepts connections from anywhere and may open connections to anywhere: the instance
metadata service, the API server, other tenants. grpo-stack renders a default-deny policy for every pod of
the release and admits only the flows listed in docs/security.md; a pod outside that net escapes the list.

## Example
```yaml
kind: RayCluster      # and no NetworkPolicy selecting ray.io/cluster
```
Use instead:
```yaml
kind: NetworkPolicy
spec:
  podSelector: {matchLabels: {app.kubernetes.io/instance: grpo}}
  policyTypes: [Ingress, Egress]
```

## Fix
Select the pod with a NetworkPolicy that lists both Ingress and Egress (grpo-stack: the release's default-deny
policy plus the component's own, from grpo-common.flows).
"""


def check(ctx) -> Iterator[Hit]:
    return iter(()) if folded(ctx) else hits(ctx)


def hits(ctx) -> Iterator[Hit]:
    """Every pod template's findings, whatever the mode (GRPO809 folds them per pod in manifest mode)."""
    for o, pod_path, _pod in ctx.pod_templates():
        covered: set[str] = set()
        for _p, spec in policies_selecting(ctx, o, pod_path):
            covered |= policy_types(spec)
        missing = sorted({"Ingress", "Egress"} - covered)
        if missing:
            yield Hit(pod_path, f"{pod_label(o, pod_path)}: no NetworkPolicy isolates its "
                      f"{' and '.join(m.lower() for m in missing)}", obj=o)
