"""Services of a release and the pods behind them, including those controllers create (not a rule: no CODE).

A Service written in the manifests fronts the pod templates its selector matches (with the labels controllers
add, lint/controllers.py). KubeRay creates the head Service of every RayCluster (RayJob, RayService) itself:
`<cluster>-head-svc` (or `headGroupSpec.headService.metadata.name`), of `headGroupSpec.serviceType`, fronting
the head pod on the head container's ports and KubeRay's defaults (dashboard 8265, client 10001, GCS 6379,
Serve 8000).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ...rayports import HEAD_DEFAULT_PORTS
from ._objects import containers, label_pairs, selector_matches
from ._podsecurity import namespace_of
from ._serving import container_ports

RAY_HEAD_DEFAULT_PORTS = HEAD_DEFAULT_PORTS


@dataclass
class ServicePort:
    port: Any
    target: Any  # int or a port name
    name: str = ""


@dataclass
class Backend:
    """A Service and the pods it fronts."""

    obj: Any  # the RenderedObject written (a Service, or the RayCluster whose head Service KubeRay creates)
    path: str  # where in `obj` the Service is described
    name: str
    namespace: str
    type: str
    annotations: dict
    source_ranges: bool
    ports: list[ServicePort]
    pods: list[tuple[Any, str, dict]] = field(default_factory=list)  # (object, pod path, pod spec)
    selector: dict = field(default_factory=dict)


def _ports(items: Any) -> list[ServicePort]:
    out = []
    for p in items if isinstance(items, list) else []:
        if isinstance(p, dict) and "port" in p:
            out.append(ServicePort(p.get("port"), p.get("targetPort", p.get("port")), str(p.get("name", ""))))
    return out


def backends(ctx) -> list[Backend]:
    """Every Service of the set, and every head Service KubeRay creates for the set's Ray clusters (found once
    per object list: several rules read them)."""
    return list(ctx.derived("service-backends", lambda: _backends(ctx)))


def _pods_by_label(ctx, templates) -> dict[tuple[str, str, str], list]:
    """(namespace, label key, value) -> the pod templates some pod of which carries it, in document order: a
    selector is then matched against the pods one of its labels already picks, not against every pod."""
    index: dict[tuple[str, str, str], list] = {}
    for t, path, pod in templates:
        ns = namespace_of(t, ctx.namespace)
        for key, value in label_pairs(ctx.pod_labels(t, path)):
            index.setdefault((ns, key, value), []).append((t, path, pod))
    return index


def _backends(ctx) -> list[Backend]:
    templates = ctx.pod_templates()
    by_label = _pods_by_label(ctx, templates)
    out = []
    for o in ctx.of_kind("Service"):
        spec = o.obj.get("spec") if isinstance(o.obj.get("spec"), dict) else {}
        selector = spec.get("selector") if isinstance(spec.get("selector"), dict) else {}
        meta = o.obj.get("metadata") if isinstance(o.obj.get("metadata"), dict) else {}
        ns = namespace_of(o, ctx.namespace)
        b = Backend(o, "spec", o.name, ns, str(spec.get("type") or "ClusterIP"), meta.get("annotations") or {},
                    bool(spec.get("loadBalancerSourceRanges")), _ports(spec.get("ports")), selector=selector)
        if selector:
            first_key, first_value = next(iter(selector.items()))
            b.pods = [(t, path, pod) for t, path, pod in by_label.get((ns, str(first_key), str(first_value)), ())
                      if selector_matches({"matchLabels": selector}, ctx.pod_labels(t, path))]
        out.append(b)
    for t, path, pod in templates:
        if not path.endswith("headGroupSpec.template.spec"):
            continue
        head_path = path.removesuffix(".template.spec")
        head = _at(t.obj, head_path)
        custom = head.get("headService") if isinstance(head.get("headService"), dict) else {}
        cmeta = custom.get("metadata") if isinstance(custom.get("metadata"), dict) else {}
        cspec = custom.get("spec") if isinstance(custom.get("spec"), dict) else {}
        name = str(cmeta.get("name") or f"{t.name}-head-svc")
        kind = str(cspec.get("type") or head.get("serviceType") or "ClusterIP")
        ports = _ports(cspec.get("ports")) or _head_ports(pod)
        # The operator writes the cluster spec's headServiceAnnotations onto the head Service it builds, beside
        # the custom headService's own (KubeRay raycluster_controller.go, reconcileHeadService).
        cluster = _at(t.obj, head_path.rpartition(".")[0]) if "." in head_path else {}
        given = cluster.get("headServiceAnnotations") if isinstance(cluster, dict) else None
        annotations = {**(given if isinstance(given, dict) else {}), **(cmeta.get("annotations") or {})}
        out.append(Backend(t, head_path, name, namespace_of(t, ctx.namespace), kind, annotations,
                           bool(cspec.get("loadBalancerSourceRanges")), ports, [(t, path, pod)]))
    return out


def _head_ports(pod: dict) -> list[ServicePort]:
    declared = {}
    for _f, _i, c in containers(pod):
        for p in c.get("ports") or []:
            if isinstance(p, dict) and "containerPort" in p:
                declared[str(p.get("name", p["containerPort"]))] = p["containerPort"]
    merged = {**RAY_HEAD_DEFAULT_PORTS, **declared}
    return [ServicePort(port, port, name) for name, port in merged.items()]


def _at(node: Any, dotted: str) -> dict:
    for part in dotted.split("."):
        node = node.get(part) if isinstance(node, dict) else (
            node[int(part)] if isinstance(node, list) and part.isdigit() and int(part) < len(node) else None)
    return node if isinstance(node, dict) else {}


def target_containers(pod: dict, target: Any) -> Iterator[tuple[str, int, dict]]:
    """Containers of the pod that declare the target port (by number or name)."""
    for f, i, c in containers(pod):
        for p in c.get("ports") or []:
            if isinstance(p, dict) and (str(p.get("containerPort")) == str(target) or p.get("name") == target):
                yield f, i, c
                break


# A word of a label value (`vllm` in `vllm-sim`), for the pods a Service that selects none was meant for.
LABEL_WORD = re.compile(r"[a-z0-9]{3,}")


def _words(value: object) -> set[str]:
    return set(LABEL_WORD.findall(str(value).lower()))


def _near(selected: str, carried: object) -> bool:
    values = carried if isinstance(carried, frozenset) else (carried,)
    return any(str(v) != selected and _words(v) & _words(selected) for v in values)


def _serves(pod: dict, targets: set[str]) -> bool:
    for kind, _i, c in containers(pod):
        if kind != "containers":
            continue
        names = {str(p.get("name")) for p in c.get("ports") or [] if isinstance(p, dict) and p.get("name")}
        if (names | {str(n) for n in container_ports(c)}) & targets:
            return True
    return False


def meant_pods(ctx, backend: Backend) -> tuple[Any, dict] | None:
    """For a Service whose selector matches no pod of the set: the pod template it was likely written for (one
    that carries every key of the selector, with a value that differs but shares a word with the selector's, and
    declares or states the port the Service targets) and the labels it carries for those keys; None when none."""
    selector = {str(k): str(v) for k, v in backend.selector.items()}
    targets = {str(p.target) for p in backend.ports}
    for t, path, pod in ctx.pod_templates():
        if namespace_of(t, ctx.namespace) != backend.namespace:
            continue
        labels = ctx.pod_labels(t, path)
        if (all(k in labels for k in selector) and any(_near(v, labels[k]) for k, v in selector.items())
                and all(labels[k] == v or _near(v, labels[k]) for k, v in selector.items()) and _serves(pod, targets)):
            return t, {k: labels[k] for k in selector}
    return None
