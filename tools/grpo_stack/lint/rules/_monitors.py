"""The Prometheus Operator's monitors (ServiceMonitor, PodMonitor): the namespaces one watches (not a rule: no
CODE). Shared by the rules that judge what a monitor selects (GRPO865, GRPO879)."""

from __future__ import annotations

from ._objects import mapping

GROUP = "monitoring.coreos.com/"


def own_namespace(o) -> str | None:
    return mapping(o.obj.get("metadata")).get("namespace")


def watched(monitor) -> set[str | None] | None:
    """The namespaces the monitor discovers its targets in (`spec.namespaceSelector.matchNames`, else its own); None
    for every namespace (`any: true`)."""
    selector = mapping(mapping(monitor.obj.get("spec")).get("namespaceSelector"))
    if selector.get("any") is True:
        return None
    names = selector.get("matchNames")
    if isinstance(names, list) and names:
        return {str(n) for n in names}
    return {own_namespace(monitor)}
