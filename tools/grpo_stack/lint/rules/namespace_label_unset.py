"""GRPO878 namespace-label-unset."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity
from ._objects import mapping
from ._podsecurity import policy_peers

CODE = "GRPO878"
NAME = "namespace-label-unset"
SEVERITY = Severity.WARNING
CATEGORY = "correctness"
SUMMARY = ("A NetworkPolicy selects namespaces by a `name` label, which Kubernetes never sets: the rule admits no "
           "namespace unless someone labels it.")
DOC = """## What it does
Reads every NetworkPolicy's peers (`spec.ingress[].from[]`, `spec.egress[].to[]`) whose `namespaceSelector` matches
on the label `name` (`matchLabels: {name: ingress-nginx}`, or a `matchExpressions` term on key `name` with operator
`In`) and reports each one naming a namespace that no Namespace object of the files labels so. A warning: it assumes
nothing outside the files (an installer, a `kubectl label`) adds that label. OpenShift's own namespaces (`openshift-*`)
are left alone: their operators set `name` on them (cluster-ingress-operator manages `name` among the labels of
`openshift-ingress`).

## Why is this bad?
Kubernetes labels every namespace with its name under the key `kubernetes.io/metadata.name` (since 1.21, set by the
API server and not removable); a plain `name` label exists only where someone added it, and the common installers
(ingress-nginx, kube-system, monitoring stacks) do not. A peer that selects `name: ingress-nginx` therefore matches no
namespace: under a CNI that enforces policies the ingress controller is refused, or the pods' DNS lookups to
`kube-system` are dropped, and the pods look healthy while every request through that path times out.

## Example
```yaml
ingress:
  - from:
      - namespaceSelector: {matchLabels: {name: ingress-nginx}}
```
Use instead:
```yaml
ingress:
  - from:
      - namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: ingress-nginx}}
```

## Fix
Select the namespace by `kubernetes.io/metadata.name`, or label it `name: <namespace>` in the same files
(`metadata.labels` of its Namespace object).
"""

KEY = "name"
# OpenShift's platform namespaces, which their operators label with `name` (cluster-ingress-operator
# pkg/operator/controller/ingress/namespace.go routerNamespaceChanged: "name" among its known labels).
OPERATOR_LABELLED = "openshift-"


def _selected(selector: dict) -> list[str]:
    """The namespaces a selector asks by the `name` label: its matchLabels value, and the values of an `In` term."""
    out = []
    value = mapping(selector.get("matchLabels")).get(KEY)
    if isinstance(value, str):
        out.append(value)
    for term in selector.get("matchExpressions") or []:
        if isinstance(term, dict) and term.get("key") == KEY and term.get("operator") == "In":
            out += [str(v) for v in term.get("values") or []]
    return out


def check(ctx) -> Iterator[Hit]:
    labelled = {str(mapping(mapping(o.obj.get("metadata")).get("labels")).get(KEY))
                for o in ctx.of_kind("Namespace")} - {"None"}
    for o in ctx.of_kind("NetworkPolicy"):
        for direction, path, peer in policy_peers(mapping(o.obj.get("spec"))):
            selector = mapping(peer.get("namespaceSelector"))
            unset = [n for n in _selected(selector) if n not in labelled and not n.startswith(OPERATOR_LABELLED)]
            if not unset:
                continue
            way = "from" if direction == "ingress" else "to"
            yield Hit(f"{path}.namespaceSelector",
                      f"NetworkPolicy {o.name}: its {direction} rule selects namespaces labelled name="
                      f"{', '.join(unset)}, a label Kubernetes never sets (it sets kubernetes.io/metadata.name), so "
                      f"it admits no traffic {way} them (assumed: nothing outside these files labels "
                      f"{'them' if len(unset) > 1 else 'it'} so)", obj=o,
                      remediation=f"select kubernetes.io/metadata.name: {unset[0]}")
