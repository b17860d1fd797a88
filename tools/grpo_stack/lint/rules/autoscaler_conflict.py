"""GRPO868 autoscaler-conflict."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from ..finding import Hit, Severity
from ._objects import mapping
from ._podsecurity import namespace_of

CODE = "GRPO868"
NAME = "autoscaler-conflict"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = ("Two autoscalers (HorizontalPodAutoscalers, KEDA ScaledObjects) scale the same workload: neither "
           "scales it.")
DOC = """## What it does
Groups every `HorizontalPodAutoscaler` (`autoscaling/v1`, `v2`) and KEDA `ScaledObject` (`keda.sh`) of the set by
the workload it scales: its namespace, and `spec.scaleTargetRef`'s kind and name (a ScaledObject's kind defaults to
`Deployment`, as KEDA defaults it). Two or more on one workload are an error, whether or not the workload is in the
files. A ScaledObject that takes over a named HPA on purpose (the `scaledobject.keda.sh/transfer-hpa-ownership:
"true"` annotation naming it in `advanced.horizontalPodAutoscalerConfig.name`) is left alone.

## Why is this bad?
KEDA scales through an HPA of its own, so both kinds end as HPAs on the same pods. The HPA controller refuses to
act on pods that more than one HPA controls: each HPA gets the condition `ScalingActive=False` with reason
`AmbiguousSelector` ("pods by selector ... are controlled by multiple HPAs", kube-controller-manager's
`podautoscaler/horizontal.go`) and the replica count stays where it was. Where KEDA's admission webhook runs, the
ScaledObject is refused outright ("the workload ... is already managed by the hpa ...", KEDA's
`scaledobject_webhook.go`), so the apply fails. Either way the model server does not scale with its load: the
queue grows, requests time out, or idle GPUs stay held.

## Example
```yaml
kind: HorizontalPodAutoscaler
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: generate}
---
kind: ScaledObject
spec:
  scaleTargetRef: {name: generate}
```
Use instead: one autoscaler per workload, with every metric it should follow:
```yaml
kind: ScaledObject
spec:
  scaleTargetRef: {name: generate}
  triggers:
    - {type: prometheus, metadata: {query: "sum(vllm:num_requests_waiting)", threshold: "8"}}
    - {type: cpu, metricType: Utilization, metadata: {value: "70"}}
```

## Fix
Keep one autoscaler for the workload and give it every metric (an HPA takes several metrics; a ScaledObject several
triggers, `cpu` and `memory` among them), or delete the other.
"""

KEDA = "keda.sh/"
TRANSFER = "scaledobject.keda.sh/transfer-hpa-ownership"


def _target(o, namespace: str) -> tuple[str, str, str] | None:
    ref = mapping(mapping(o.obj.get("spec")).get("scaleTargetRef"))
    name = ref.get("name")
    if not isinstance(name, str) or not name:
        return None
    kind = ref.get("kind") or ("Deployment" if o.kind == "ScaledObject" else None)
    if not isinstance(kind, str):
        return None
    return namespace_of(o, namespace), kind, name


def _takes_over(o) -> str | None:
    """The HPA a ScaledObject adopts on purpose, if it says so."""
    meta = mapping(o.obj.get("metadata"))
    if str(mapping(meta.get("annotations")).get(TRANSFER, "")).lower() != "true":
        return None
    config = mapping(mapping(mapping(o.obj.get("spec")).get("advanced")).get("horizontalPodAutoscalerConfig"))
    return config.get("name") if isinstance(config.get("name"), str) else None


def check(ctx) -> Iterator[Hit]:
    scalers = [o for o in ctx.of_kind("HorizontalPodAutoscaler")
               if str(o.obj.get("apiVersion", "")).startswith("autoscaling/")]
    scalers += [o for o in ctx.of_kind("ScaledObject") if str(o.obj.get("apiVersion", "")).startswith(KEDA)]
    by_target: dict[tuple[str, str, str], list] = defaultdict(list)
    for o in scalers:
        target = _target(o, ctx.namespace)
        if target is not None:
            by_target[target].append(o)
    for (_ns, kind, name), group in by_target.items():
        adopted = {_takes_over(o) for o in group if o.kind == "ScaledObject"} - {None}
        group = [o for o in group if not (o.kind == "HorizontalPodAutoscaler" and o.name in adopted)]
        if len(group) < 2:
            continue
        first, *others = group
        named = ", ".join(f"{o.kind} {o.name}" for o in group)
        for o in others:
            yield Hit("spec.scaleTargetRef", f"{o.kind} {o.name} scales {kind} {name}, which {first.kind} "
                      f"{first.name} scales too ({named}): KEDA scales through an HPA of its own, and the HPA "
                      "controller stops scaling pods more than one HPA controls (AmbiguousSelector); KEDA's "
                      "admission webhook refuses the ScaledObject outright (already managed by the hpa)", obj=o)
