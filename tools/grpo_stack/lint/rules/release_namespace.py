"""GRPO850 release-namespace."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from ..finding import Hit, Severity

CODE = "GRPO850"
NAME = "release-namespace"
SEVERITY = Severity.ERROR
SUMMARY = "Manifests linted together (one release) disagree on their namespace, or differ from `--namespace`."
DOC = """## What it does
In manifest mode, every file given in one `grpo-lint` run is one release: the objects `kubectl apply` will
create together. Namespaced objects must agree on where they go:

- with `--namespace NS`: an object whose `metadata.namespace` is not `NS` is reported (`kubectl apply -n NS`
  refuses it); objects without a namespace take `-n NS` and are fine;
- without `--namespace`: when some objects set a namespace, every other namespaced object must set the same one;
  an object without one (or in a different one) is reported. A set that creates a `Namespace` and puts nothing
  in it is reported the same way.

A set with no namespaces at all (plain `helm template` output, applied with `-n`) is clean. Cluster-scoped kinds
(Namespace, ClusterRole, StorageClass, PersistentVolume, CRDs, any `Cluster*` kind, and the cluster-scoped custom
resources of Kueue and Karpenter: ResourceFlavor, WorkloadPriorityClass, AdmissionCheck, NodePool, EC2NodeClass,
NodeClaim) are never reported.

## Why is this bad?
The predecessor's manifests set `namespace: verl` on some objects and nothing on others: `kubectl apply -f` put
the sandbox in whatever namespace the context pointed at, its Service never resolved from the trainer, and the
reward preflight failed against a name with nothing behind it.

## Example
```yaml
apiVersion: v1
kind: Service
metadata: {name: sandbox, namespace: verl}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: sandbox}
```
Use instead:
```yaml
apiVersion: apps/v1
kind: Deployment
metadata: {name: sandbox, namespace: verl}
```

## Fix
Set the same `metadata.namespace` on every namespaced object, or on none and apply with `kubectl apply -n NS`.
"""

EXPECTED = "release-namespace"  # ctx.extra key: the namespace `--namespace` names in manifest mode (or None)
CLUSTER_SCOPED = frozenset({
    "Namespace", "Node", "PersistentVolume", "StorageClass", "CustomResourceDefinition", "PriorityClass",
    "RuntimeClass", "IngressClass", "APIService", "CSIDriver", "CSINode", "VolumeAttachment",
    "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding", "CertificateSigningRequest", "FlowSchema", "PriorityLevelConfiguration",
    "VolumeSnapshotClass", "GatewayClass", "ComponentStatus", "TokenReview", "SelfSubjectReview",
    "SelfSubjectAccessReview", "SubjectAccessReview", "SelfSubjectRulesReview",
    # cluster-scoped custom resources of the schedulers and autoscalers GPU clusters run (Kueue, Karpenter)
    "ResourceFlavor", "WorkloadPriorityClass", "AdmissionCheck", "NodePool", "EC2NodeClass", "NodeClaim",
})


def namespace_of(o) -> str | None:
    meta = o.obj.get("metadata")
    ns = meta.get("namespace") if isinstance(meta, dict) else None
    return ns if isinstance(ns, str) and ns else None


def is_namespaced(o) -> bool:
    return o.kind not in CLUSTER_SCOPED and not o.kind.startswith("Cluster")


def check(ctx) -> Iterator[Hit]:
    if ctx.has_values:  # the chart sets every namespace from the release; values mode renders with --namespace
        return
    namespaced = [o for o in ctx.objects if is_namespaced(o)]
    expected = ctx.extra.get(EXPECTED)
    if expected:
        for o in namespaced:
            ns = namespace_of(o)
            if ns and ns != expected:
                yield Hit("metadata.namespace", f"{o.kind} {o.name} is in namespace {ns!r}, the release in "
                          f"{expected!r} (--namespace): `kubectl apply -n {expected}` refuses it", obj=o)
        return
    counts = Counter(ns for ns in map(namespace_of, namespaced) if ns)
    created = [o.name for o in ctx.of_kind("Namespace") if o.name]
    if not counts and not created:
        return  # helm template output: the namespace is given at apply time
    main = counts.most_common(1)[0][0] if counts else created[0]
    context = (f"while the other objects of the release are in {main!r}" if counts
               else f"although the release creates Namespace {main!r}")
    for o in namespaced:
        ns = namespace_of(o)
        if ns is None:
            where = "metadata" if isinstance(o.obj.get("metadata"), dict) else "kind"
            yield Hit(where, f"{o.kind} {o.name} has no namespace {context}: `kubectl apply -f` puts it in the "
                      "kubectl context's namespace", obj=o, remediation=f"set metadata.namespace: {main}")
        elif ns != main:
            yield Hit("metadata.namespace", f"{o.kind} {o.name} is in namespace {ns!r}; the other "
                      f"{counts[main]} namespaced object(s) of the release are in {main!r}", obj=o)
