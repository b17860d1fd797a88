"""The Prometheus Operator's monitors (ServiceMonitor, PodMonitor): the namespaces one watches (not a rule: no
CODE). Shared by the rules that judge what a monitor selects (GRPO865, GRPO879)."""

from __future__ import annotations

from ._objects import mapping
from ._podsecurity import namespace_of

GROUP = "monitoring.coreos.com/"


def watched(monitor) -> set[str] | None:
    """The namespaces the monitor discovers its targets in (`spec.namespaceSelector.matchNames`, else its own, ""
    where it states none: compare `namespace_of(o, "")`); None for every namespace (`any: true`)."""
    selector = mapping(mapping(monitor.obj.get("spec")).get("namespaceSelector"))
    if selector.get("any") is True:
        return None
    names = selector.get("matchNames")
    if isinstance(names, list) and names:
        return {str(n) for n in names}
    return {namespace_of(monitor, "")}


def monitors(ctx, kind: str) -> list:
    """The set's Prometheus Operator monitors of that kind (ServiceMonitor, PodMonitor)."""
    return [m for m in ctx.of_kind(kind) if str(m.obj.get("apiVersion", "")).startswith(GROUP)]


def plain_selector(monitor) -> dict | None:
    """The monitor's `spec.selector.matchLabels`, where it selects by those alone; None for a selector with
    `matchExpressions` or no labels (not judged)."""
    selector = mapping(mapping(monitor.obj.get("spec")).get("selector"))
    wanted = selector.get("matchLabels")
    if selector.get("matchExpressions") or not isinstance(wanted, dict) or not wanted:
        return None
    return wanted
