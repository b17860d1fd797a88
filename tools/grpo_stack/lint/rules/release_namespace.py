"""GRPO850 release-namespace."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..finding import Hit, Severity
from ._objects import FirstLabelIndex, selector_matches

CODE = "GRPO850"
NAME = "release-namespace"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "Manifests linted together (one release) disagree on their namespace, or differ from `--namespace`."
DOC = """## What it does
In manifest mode, every file given in one `grpo-lint` run is one release: the objects `kubectl apply` will
create together. Namespaced objects must agree on where they go:

- with `--namespace NS`: an object whose `metadata.namespace` is not `NS` is reported (`kubectl apply -n NS`
  refuses it); objects without a namespace take `-n NS` and are fine;
- without `--namespace`: objects that refer to each other must be in the same namespace: a Service and the pods
  its selector matches, a pod and a Service its URLs name by bare host (`http://sandbox:8080`), a pod and the
  ServiceAccount, ConfigMaps, Secrets and claims it names, a RoleBinding and its Role and ServiceAccount subjects
  (without an explicit namespace), an Ingress and its backend Services, a workload and its Kueue LocalQueue
  (`kueue.x-k8s.io/queue-name`). One of a pair without a namespace (while the other sets one) or two different
  namespaces is reported; a warning when the one set is `default`, where an unset object lands too while the
  kubectl context's namespace is the usual `default`. Objects that refer to nothing in the set (unrelated samples
  in one folder) are never compared, and a reference that finds its object in its own namespace is never paired
  with a namesake elsewhere: one set may hold the same release in several namespaces (staging and production
  linted together).

A set with no namespaces at all (plain `helm template` output, applied with `-n`) is clean. An object without a
namespace whose file a kustomization beside it lists in its `resources` is in the namespace kustomize gives it,
where the files show one: that kustomization's `namespace:`, or the `namespace:` of an overlay beside another of the
files that includes the base's directory (`resources: [../../base/app]`, a GitOps layout). Cluster-scoped kinds
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
# ctx.extra key: file -> the namespace kustomize gives its objects (lint/release.py, kustomize.py): an object that
# states none there is applied into that one, not the kubectl context's.
KUSTOMIZED = "kustomized-namespaces"
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
    kustomized = ctx.extra.get(KUSTOMIZED) or {}
    for a, b, why in references(ctx):
        ns_a = namespace_of(a) or kustomized.get(a.template)
        ns_b = namespace_of(b) or kustomized.get(b.template)
        if ns_a == ns_b:
            continue
        target = ns_a or ns_b
        if ns_a is None or ns_b is None:
            unplaced, placed = (a, b) if ns_a is None else (b, a)
            where = "metadata" if isinstance(unplaced.obj.get("metadata"), dict) else "kind"
            # the context's namespace is `default` unless the user chose another: then the pair meets, so the
            # verdict rests on that assumption
            usual = target == "default"
            yield Hit(where, f"{unplaced.kind} {unplaced.name} has no namespace, but {_pair(a, b, why)}, and "
                      f"{placed.kind} {placed.name} is in {target!r}: `kubectl apply -f` puts it in the kubectl "
                      "context's namespace" + (" (they meet only while that is 'default', the usual context)"
                                               if usual else ""), obj=unplaced,
                      remediation=f"set metadata.namespace: {target}", severity=Severity.WARNING if usual else None)
        else:
            yield Hit("metadata.namespace", f"{a.kind} {a.name} is in namespace {ns_a!r}, but {_pair(a, b, why)}, "
                      f"and {b.kind} {b.name} is in {ns_b!r}", obj=a)


def _pair(a, b, why: str) -> str:
    return f"{a.kind} {a.name} {why} {b.kind} {b.name}"


# `http://sandbox:8080/…`: a bare Service name resolves in the calling pod's own namespace (explicit
# `<svc>.<ns>` names are GRPO101's).
BARE_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://([a-z0-9]([-a-z0-9]*[a-z0-9])?)(?=[:/]|$|\s)")
POD_REFERENCES = (("serviceAccountName", "ServiceAccount"), ("serviceAccount", "ServiceAccount"))
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"


def references(ctx) -> Iterator[tuple[object, object, str]]:
    """(a, b, how a refers to b) for namespaced objects of the set that must share a namespace to work: a
    Service and the pods its selector matches, a URL and the Service its bare host names, a pod and the
    ServiceAccount, ConfigMaps, Secrets and claims it names, a binding and its Role and ServiceAccount
    subjects, an Ingress and its backend Services, a workload and its Kueue LocalQueue. Unrelated samples
    linted together are never compared, and a reference that finds its object in its own namespace is never
    paired with a namesake elsewhere: one set may hold the same release in several namespaces."""
    first_named: dict[tuple[str, str], object] = {}
    placed: set[tuple[str, str, str | None]] = set()
    for o in ctx.objects:
        if is_namespaced(o) and o.name:
            first_named.setdefault((o.kind, o.name), o)
            placed.add((o.kind, o.name, namespace_of(o)))
    seen: set[tuple[int, int]] = set()

    def pair(a, kind: str, name, why: str):
        b = first_named.get((kind, name)) if isinstance(name, str) else None
        if b is None or b is a or (kind, name, namespace_of(a)) in placed:
            return
        if (id(a), id(b)) not in seen:
            seen.add((id(a), id(b)))
            yield a, b, why

    templates = [(o, ctx.pod_labels(o, pod_path), pod_path, pod) for o, pod_path, pod in ctx.pod_templates()
                 if is_namespaced(o)]
    strays, unserved = _services_selecting_nothing_at_home(ctx, templates)
    for o, labels, pod_path, pod in templates:
        for svc, selector in strays.candidates(labels) if id(o) in unserved else ():
            if selector_matches({"matchLabels": selector}, labels) and (id(svc), id(o)) not in seen:
                seen.add((id(svc), id(o)))
                yield svc, o, "selects the pods of"
        for key, kind in POD_REFERENCES:
            yield from pair(o, kind, pod.get(key), "runs as")
        for _path, text in ctx.strings_under(o, pod_path):
            for m in BARE_URL.finditer(text) if "://" in text else ():
                yield from pair(o, "Service", m.group(1), "calls")
        for vol in _items(pod.get("volumes")):
            if isinstance(vol, dict):
                yield from pair(o, "ConfigMap", (vol.get("configMap") or {}).get("name"), "mounts")
                yield from pair(o, "Secret", (vol.get("secret") or {}).get("secretName"), "mounts")
                yield from pair(o, "PersistentVolumeClaim",
                                (vol.get("persistentVolumeClaim") or {}).get("claimName"), "mounts")
    for b in ctx.of_kind("RoleBinding"):
        ref = b.obj.get("roleRef") if isinstance(b.obj.get("roleRef"), dict) else {}
        if ref.get("kind") == "Role":
            yield from pair(b, "Role", ref.get("name"), "grants")
        for s in _items(b.obj.get("subjects")):
            if isinstance(s, dict) and s.get("kind") == "ServiceAccount" and not s.get("namespace"):
                yield from pair(b, "ServiceAccount", s.get("name"), "binds")
    for ing in ctx.of_kind("Ingress"):
        for path, text in ctx.strings_under(ing, "spec"):
            if path.endswith("service.name"):
                yield from pair(ing, "Service", text, "routes to")
    for o in ctx.objects:
        meta = o.obj.get("metadata") if isinstance(o.obj.get("metadata"), dict) else {}
        labels = meta.get("labels") if isinstance(meta.get("labels"), dict) else {}
        if is_namespaced(o) and labels.get(QUEUE_LABEL):
            yield from pair(o, "LocalQueue", labels[QUEUE_LABEL], "is queued in")


def _services_selecting_nothing_at_home(ctx, templates: list) -> tuple[FirstLabelIndex, set[int]]:
    """The Services whose selector matches no pods of their own namespace (indexed by label), and the pods that no
    Service of their own namespace selects: only a pair of the two is certainly misplaced. Each pod
    is compared with its own namespace's Services only, so copies of a release cost each copy, not their square."""
    at_home: dict[str | None, FirstLabelIndex] = {}
    services = []
    for svc in ctx.of_kind("Service"):
        selector = (svc.obj.get("spec") or {}).get("selector")
        if isinstance(selector, dict) and selector and is_namespaced(svc):
            at_home.setdefault(namespace_of(svc), FirstLabelIndex()).add(selector, (svc, selector))
            services.append((svc, selector))
    serving: set[int] = set()
    for o, labels, _pod_path, _pod in templates:
        home = at_home.get(namespace_of(o))
        for svc, selector in home.candidates(labels) if home else ():
            if selector_matches({"matchLabels": selector}, labels):
                serving.add(id(svc))
                serving.add(id(o))
    strays = FirstLabelIndex()
    for svc, selector in services:
        if id(svc) not in serving:
            strays.add(selector, (svc, selector))
    return strays, {id(o) for o, *_rest in templates if id(o) not in serving}


def _items(node) -> list:
    return node if isinstance(node, list) else []
