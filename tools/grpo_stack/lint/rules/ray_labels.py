"""GRPO401 ray-selector."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from ..finding import Hit, Severity
from ._objects import custom_resource, label_matches, selector_keys, selector_matches
from ._podsecurity import policy_peers
from ._rbac import accounts_granted, pod_account
from ._services import backends, meant_pods

CODE = "GRPO401"
NAME = "ray-selector"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = ("A selector aimed at Ray pods uses labels KubeRay never sets, is not scoped to this cluster, "
           "or matches nothing.")
DOC = """## What it does
Checks every pod affinity / anti-affinity term, NetworkPolicy pod selector and Service selector in the rendered
objects. A term that targets Ray pods must use KubeRay's real labels (`ray.io/node-type`, `ray.io/cluster`,
`ray.io/group`, `ray.io/is-ray-node`) and include `ray.io/cluster` so it is scoped to this release's cluster. Every
selector must match at least one pod the release creates (manifests with no pod template at all, such as a Service
file applied apart from its workload, or one beside custom resources that make no pods, are not judged for that),
counting the labels controllers add to the pods they create (KubeRay, JobSet, LeaderWorkerSet, Job, StatefulSet): a
Service that selects a JobSet's or a RayJob's pods by those labels is not dangling. A RayJob's or RayService's
cluster is named `<name>-<random>`, so `ray.io/cluster: <RayJob name>` matches nothing; scope such selectors with a
label of the pod template instead. A Service that matches no pod names the pods of the set it was likely written
for, when some carry every key of its selector with a near value (`app: vllm` for `app: vllm-sim`) and declare the
port it targets. A Service whose selector names a custom resource of the set that has no pod template (a
`Prometheus`, a database cluster: its operator labels the pods it makes with the resource's name; KServe with
`isvc.<name>-predictor` and its twins) is not reported as matching nothing; in a set with no pod template, one that
selects by such an operator's label (`prometheus: <name>`) naming no resource of the set is. A selector that adds
any label of its own to the Ray keys is taken as scoped. A preferred anti-affinity term need not be scoped (matching
another cluster's pods only spreads these further); an unscoped preferred affinity term is a warning (it may place
the pods beside another cluster's, never blocks them). A legacy key (`ray-node-type`) that a pod template of the set
sets itself is an ordinary label; with no pod template in the set, selecting on one is a warning that names the
assumption. On manifests (not the chart), an affinity term or a NetworkPolicy selector that matches no pod of the
set is a warning naming its assumption too: such a term often names a workload applied from its own file (a
benchmark placed beside the server it measures, a policy file beside workloads that each have their own); a
NetworkPolicy's peers (`from`, `to`), which most often name a database or cache installed apart, are judged there
only for their Ray keys. A
TrainJob's pods carry the JobSet labels of the JobSet Kubeflow Trainer runs it as, named after the TrainJob. A pod
whose service account a binding of the set allows to `patch` or `update` pods may label itself at run time (a leader
that adds `role: master`): a Service selecting labels such a pod template carries, plus labels it lacks, is taken as
meaning those pods.

## Why is this bad?
The predecessor's anti-affinity selected `ray-node-type: head`. KubeRay labels pods `ray.io/node-type`, so the term
matched nothing, scored zero on every node, and both sandbox replicas landed on the Ray head's node and crashed
together under load. A selector that matches nothing is silently inert.

## Example
```yaml
podAntiAffinity:
  requiredDuringSchedulingIgnoredDuringExecution:
    - topologyKey: kubernetes.io/hostname
      labelSelector:
        matchLabels: {ray-node-type: head}
```
Use instead:
```yaml
        matchLabels: {ray.io/node-type: head, ray.io/cluster: grpo-ray}
```

## Fix
Select on `ray.io/node-type` together with `ray.io/cluster: <RayCluster name>`; confirm with `kubectl get pod
<head-pod> --show-labels`.
"""

LEGACY = {"ray-node-type", "ray-cluster", "ray-node-name", "rayNodeType", "node-type", "ray-group"}
RAY_KEYS = {"ray.io/node-type", "ray.io/group", "ray.io/is-ray-node", "ray.io/identifier"}
# Labels every KubeRay pod carries whatever its cluster: they scope nothing.
KUBERAY_COMMON = RAY_KEYS | {"ray.io/serve", "app.kubernetes.io/name", "app.kubernetes.io/created-by"}


def check(ctx) -> Iterator[Hit]:
    pods = [(o, p, ctx.pod_labels(o, p)) for o, p, _ in ctx.pod_templates()]
    # None: the manifests make no pod at all, neither from a template nor through an operator's resource (a
    # Service file applied apart from its Deployment); a selector is then judged only for the labels it uses.
    all_labels: list | None = [labels for _, _, labels in pods]
    with_pods = {id(o) for o, _, _ in pods}
    # a custom resource without a template the set shows: its operator makes its pods (a Prometheus, a sandbox pool)
    operated_objects = [o for o in ctx.objects if id(o) not in with_pods and custom_resource(o.obj)]
    operated = {name for o in operated_objects for name in _operator_label_values(o)}
    # the label an operator puts on the pods it makes, named for the resource's kind (`prometheus: <name>`)
    operator_keys = {o.kind.lower() for o in operated_objects}
    if not all_labels and not ctx.has_values:
        all_labels = None  # no pod template at all (custom resources whose operators make pods included)
    clusters = {o.name for o in ctx.of_kind("RayCluster")}
    generated = {o.name: o.kind for o in ctx.of_kind("RayJob", "RayService")}
    for o, pod_path, pod in ctx.pod_templates():
        affinity = pod.get("affinity") or {}
        for kind in ("podAffinity", "podAntiAffinity"):
            rules = affinity.get(kind) or {}
            for i, term in enumerate(rules.get("requiredDuringSchedulingIgnoredDuringExecution") or []):
                yield from _term(o, f"{pod_path}.affinity.{kind}.requiredDuringSchedulingIgnoredDuringExecution.{i}",
                                 term, all_labels, clusters, generated, apart=not ctx.has_values)
            for i, weighted in enumerate(rules.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
                path = f"{pod_path}.affinity.{kind}.preferredDuringSchedulingIgnoredDuringExecution.{i}.podAffinityTerm"
                yield from _term(o, path, weighted.get("podAffinityTerm") or {}, all_labels, clusters, generated,
                                 apart=not ctx.has_values, preferred=kind)
    for o in ctx.of_kind("NetworkPolicy"):
        spec = o.obj.get("spec") or {}
        # on manifests a policy often governs pods a file of their own applies: matching nothing here is a warning
        apart = not ctx.has_values
        yield from _selector(o, "spec.podSelector", spec.get("podSelector") or {}, all_labels, clusters, generated,
                             apart=apart)
        for _direction, path, peer in policy_peers(spec):
            if isinstance(peer.get("podSelector"), dict) and "namespaceSelector" not in peer:
                # on manifests a peer names the pods the policy lets through, most often of a database or cache
                # installed apart (fourteen such warnings on the labelled corpora, none right): only its Ray keys
                # are judged there
                yield from _selector(o, f"{path}.podSelector", peer["podSelector"],
                                     all_labels if ctx.has_values else None, clusters, generated, apart=apart)
    written = {id(b.obj): b for b in backends(ctx) if b.obj.kind == "Service"}
    # pods whose service account may patch pods can label themselves at run time (a leader that adds `role:
    # master`, as Patroni and self-electing trainers do): a Service may select them by a label no template sets
    patchers = accounts_granted(ctx, "pods", SELF_LABEL_VERBS)
    self_labelling = [ctx.pod_labels(o, p) for o, p, pod in ctx.pod_templates() if pod_account(pod) in patchers]
    for o in ctx.of_kind("Service"):
        sel = (o.obj.get("spec") or {}).get("selector")
        if sel:
            # with no pod template in the set, only a Service selecting by an operator's label is judged: the
            # resources of the set are then the pods it can mean
            judged = [] if all_labels is None and operator_keys & set(map(str, sel)) else all_labels
            if judged is not None:
                judged = judged + [{**labels, **sel} for labels in self_labelling if _may_add(labels, sel)]
            for hit in _selector(o, "spec.selector", {"matchLabels": sel}, judged, clusters, generated, operated):
                yield _with_meant_pods(ctx, written.get(id(o)), hit)


SELF_LABEL_VERBS = frozenset({"patch", "update"})


def _may_add(labels: dict, selector: dict) -> bool:
    """A self-labelling pod template a Service selector may mean: it carries some of the selector's labels, each with
    the selected value, and lacks only the others, which it may add to itself."""
    carried = [k for k in selector if k in labels]
    return bool(carried) and all(label_matches(labels, k, str(selector[k])) for k in carried)


# KServe labels the pods of an InferenceService's components `app: isvc.<name>-<component>` (a raw deployment's
# workers `...-worker`) and `serving.kserve.io/inferenceservice: <name>` (kserve pkg/constants, GetRawServiceLabel,
# GetRawWorkerServiceLabel; PredictorServiceName and its twins).
KSERVE_COMPONENTS = ("predictor", "transformer", "explainer")


def _operator_label_values(o) -> set[str]:
    """The label values an operator gives the pods it makes for a resource: its name, and for an InferenceService
    the names KServe derives from it."""
    names = {o.name}
    if o.kind == "InferenceService":
        for component in KSERVE_COMPONENTS:
            names |= {f"{o.name}-{component}", f"isvc.{o.name}-{component}", f"isvc.{o.name}-{component}-worker"}
    return names


def _with_meant_pods(ctx, backend, hit: Hit) -> Hit:
    """A Service that matches no pod, told which pods of the set it was likely written for (a near label value on
    pods that declare its target port) and how to select them."""
    meant = meant_pods(ctx, backend) if backend is not None and "matches no pod" in hit.message else None
    if meant is None:
        return hit
    pods, carried = meant
    return replace(hit, message=f"{hit.message}; {pods.kind} {pods.name}, whose containers declare the port it "
                   f"targets, labels its pods {carried}: the Service has no endpoints",
                   remediation=f"select the labels the pods carry ({carried}), or label the pods as the Service "
                   "selects")


def _term(o, path, term, all_labels, clusters, generated, apart: bool, preferred: str = "") -> Iterator[Hit]:
    """An affinity term; `apart`: the files may not be the whole release (manifests, not the chart), and a term
    often names the pods of a workload applied from its own file (a benchmark beside the server it measures);
    `preferred`: the kind (podAffinity, podAntiAffinity) of a preferred term."""
    yield from _selector(o, f"{path}.labelSelector", term.get("labelSelector") or {}, all_labels, clusters, generated,
                         apart=apart, preferred=preferred)


def _selector(o, path, selector, all_labels, clusters, generated, operated=frozenset(),
              apart: bool = False, preferred: str = "") -> Iterator[Hit]:
    keys = selector_keys(selector)
    if not keys:
        return
    # a pod template may set such a label itself (KubeRay copies template labels to the pods): only a label no pod
    # of the set carries is KubeRay's missing one, and with no pod in the set that is an assumption
    legacy = [k for k in keys if k in LEGACY and not any(k in labels for labels in all_labels or [])]
    if legacy:
        unseen = all_labels is None
        yield Hit(path, f"{o.kind} {o.name}: selects on {', '.join(legacy)}, a label KubeRay never sets "
                  "(it sets ray.io/node-type, ray.io/cluster, ray.io/group)"
                  + (" (assumed: no pod template applied apart from these files sets it itself)" if unseen else ""),
                  obj=o, severity=Severity.WARNING if unseen else None)
        return
    if any(k in RAY_KEYS for k in keys) and all(k in KUBERAY_COMMON for k in keys):
        # A preferred anti-affinity that also matches other clusters' pods only spreads these further; a
        # preferred affinity that does may place them beside the wrong cluster, but never blocks them.
        if preferred != "podAntiAffinity":
            yield Hit(path, f"{o.kind} {o.name}: selects Ray pods without ray.io/cluster, so it also matches other "
                      "Ray clusters in the namespace" + (" (a preference: the pods may be placed by another "
                                                         "cluster's)" if preferred else ""), obj=o,
                      remediation=_add_cluster_label(clusters),
                      severity=Severity.WARNING if preferred else None)
        return
    cluster = (selector.get("matchLabels") or {}).get("ray.io/cluster")
    if cluster in generated and cluster not in clusters:
        yield Hit(path, f"{o.kind} {o.name}: ray.io/cluster={cluster}, but KubeRay names the cluster of "
                  f"{generated[cluster]} {cluster} `{cluster}-<5 random characters>`, so this matches nothing",
                  obj=o, remediation="select on a label of the RayJob/RayService pod template instead of "
                  "ray.io/cluster")
        return
    if cluster and clusters and cluster not in clusters:
        yield Hit(path, f"{o.kind} {o.name}: ray.io/cluster={cluster} but this release's RayCluster is "
                  f"{', '.join(sorted(clusters))}", obj=o)
        return
    labels = selector.get("matchLabels")
    if isinstance(labels, dict) and set(map(str, labels.values())) & operated:
        return  # operators label the pods of a resource with its name: the pods exist, unseen in the set
    if all_labels is None:
        return  # manifests that make no pod at all: the pods come from files applied apart, unseen here
    if not any(selector_matches(selector, labels) for labels in all_labels):
        yield Hit(path, f"{o.kind} {o.name}: selector {selector.get('matchLabels') or selector} matches no pod "
                  "this release creates" + (" (assumed: these files are the whole release; an affinity term or a "
                                            "NetworkPolicy may name the pods of a workload applied from its own file)"
                                            if apart else ""),
                  obj=o, severity=Severity.WARNING if apart else None)


def _add_cluster_label(clusters) -> str:
    """The fix names the cluster when the files hold one; with several, the user picks (sorted: output is stable)."""
    names = sorted(clusters)
    if len(names) == 1:
        return f"add ray.io/cluster: {names[0]}"
    return "add ray.io/cluster: " + (f"<one of {', '.join(names)}>" if names else "<RayCluster name>")
