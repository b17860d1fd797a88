"""GRPO615 ray-head-on-gpu-node."""

from __future__ import annotations

from collections.abc import Iterator

from ...catalog.instances import lookup
from ..context import node_at
from ..finding import Hit, Severity
from ._objects import containers

CODE = "GRPO615"
NAME = "ray-head-on-gpu-node"
SEVERITY = Severity.WARNING
CATEGORY = "cost"
SUMMARY = "A Ray head that uses no GPU is placed on a GPU instance type: the node is paid for and its GPUs idle."
DOC = """## What it does
For the head group of every RayCluster, RayJob and RayService: when the head pod selects a GPU instance type
(`node.kubernetes.io/instance-type` in its nodeSelector, or every type a required node affinity allows; values:
`raycluster.head.instanceType`) and its containers request no `nvidia.com/gpu`, the finding names the type and
its GPU count. A head that requests GPUs and advertises them (`num-gpus` unset or above 0) is using them and is
not reported.

## Why is this bad?
A head with no GPU request (or `num-gpus: "0"`) gives Ray no GPU to schedule there, so nothing uses the node's
GPUs; the predecessor pinned its head to a p5 node with `NVIDIA_VISIBLE_DEVICES=void`, paying for eight idle
GPUs for the life of the cluster. The head needs CPUs and memory for the GCS, the dashboard and the driver:
a CPU instance type does it for a fraction of the price.

## Example
```yaml
raycluster:
  head:
    instanceType: p5en.48xlarge
```
Use instead:
```yaml
raycluster:
  head:
    instanceType: m6i.4xlarge
```

## Fix
Place the head on a CPU instance type (the chart's default is `m6i.4xlarge`); keep GPU nodes for the workers.
"""

INSTANCE_TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")


def _selected_types(pod: dict) -> tuple[str, list[str]]:
    """(where, instance types the pod may run on)."""
    selector = pod.get("nodeSelector") if isinstance(pod.get("nodeSelector"), dict) else {}
    for k in INSTANCE_TYPE_LABELS:
        if selector.get(k):
            return "nodeSelector", [str(selector[k])]
    terms = node_at(pod, "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms")
    out = []
    for term in terms if isinstance(terms, list) else []:
        for expr in (term.get("matchExpressions") or []) if isinstance(term, dict) else []:
            if isinstance(expr, dict) and expr.get("key") in INSTANCE_TYPE_LABELS and expr.get("operator") == "In":
                out += [str(v) for v in expr.get("values") or []]
    return "affinity.nodeAffinity", out


def _requests_gpus(pod: dict) -> bool:
    for _, _, c in containers(pod):
        res = c.get("resources") if isinstance(c.get("resources"), dict) else {}
        for part in ("limits", "requests"):
            value = (res.get(part) or {}).get("nvidia.com/gpu") if isinstance(res.get(part), dict) else None
            if value not in (None, 0, "0", ""):
                return True
    return False


def check(ctx) -> Iterator[Hit]:
    for o, pod_path, pod in ctx.pod_templates():
        if ".headGroupSpec." not in f".{pod_path}." or _requests_gpus(pod):
            continue
        where, types = _selected_types(pod)
        gpu_types = [(t, lookup(t)) for t in types]
        gpu_types = [(t, it) for t, it in gpu_types if it is not None and it.gpus > 0]
        if not types or len(gpu_types) < len(types):
            continue  # unknown types, or a CPU type among those allowed
        shown = ", ".join(f"{t} ({it.gpus} GPUs)" for t, it in gpu_types)
        key = "raycluster.head.instanceType" if ctx.has_values else f"{pod_path}.{where}"
        yield Hit(key, f"{o.kind} {o.name}: the Ray head requests no GPU but runs on {shown}; the node's GPUs are "
                  "paid for and never used", obj=None if ctx.has_values else o)
