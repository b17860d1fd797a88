"""Pod specs found by shape in any object (where a workload, a CronJob or a custom resource such as RayCluster,
RayJob or JobSet embeds the pods it creates), and the node at a dotted path of an object."""

from __future__ import annotations

from typing import Any


def is_pod_spec(node: Any) -> bool:
    """A PodSpec by shape: a `containers` list whose items are mappings naming an image or a name."""
    items = node.get("containers") if isinstance(node, dict) else None
    return (isinstance(items, list) and bool(items)
            and all(isinstance(c, dict) and ("image" in c or "name" in c) for c in items))


def containers(pod_spec: dict[str, Any]):
    """(list name, index, container) for init and regular containers."""
    for field in ("initContainers", "containers"):
        items = pod_spec.get(field) if isinstance(pod_spec, dict) else None
        for i, c in enumerate(items if isinstance(items, list) else []):
            if isinstance(c, dict):  # anything else is the object schema's finding, not a rule's crash
                yield field, i, c


def find_pod_specs(node: Any, path: str = "") -> list[tuple[str, dict]]:
    """(dotted path, pod spec) for every PodSpec under `node`, outermost first, never looking inside one."""
    if is_pod_spec(node):
        return [(path, node)]
    out: list[tuple[str, dict]] = []
    if isinstance(node, dict):
        for k, v in node.items():
            if k in ("metadata", "status"):
                continue
            out += find_pod_specs(v, f"{path}.{k}" if path else str(k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += find_pod_specs(v, f"{path}.{i}" if path else str(i))
    return out


def node_at(node: Any, dotted: str) -> Any:
    """The node at a dotted path (list indices as numbers), or None where the path does not exist."""
    for part in dotted.split("."):
        if isinstance(node, dict):
            node = node.get(part)
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def pod_metadata(obj: Any, pod_path: str) -> dict[str, Any]:
    """The metadata the pods of the pod spec at `pod_path` start from: the object's own for a bare Pod (`spec`),
    else the template's beside the spec; {} where there is none."""
    meta = obj.get("metadata") if pod_path == "spec" and isinstance(obj, dict) else (
        node_at(obj, pod_path.rsplit(".", 1)[0] + ".metadata") if "." in pod_path else None)
    return meta if isinstance(meta, dict) else {}
