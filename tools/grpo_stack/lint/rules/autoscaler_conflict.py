"""GRPO868 autoscaler-conflict."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from ..finding import Hit, Severity
from ._autoscalers import autoscalers, resource_metrics, target
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

A `VerticalPodAutoscaler` (`autoscaling.k8s.io`) that applies its recommendations (`updateMode` `Auto` or
`Recreate`, `Auto` when unset) to a workload an HPA or a ScaledObject scales on CPU or memory is a warning: the VPA
project's own documented limit ("should not be used with the HPA on the same resource metric (CPU or memory)") is
that the VPA rewrites the requests the HPA measures utilization against and evicts pods to apply them, so each
undoes the other. `Off` and `Initial` only recommend, or set requests at a pod's creation, and are left alone.

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

TRANSFER = "scaledobject.keda.sh/transfer-hpa-ownership"
VPA_GROUP = "autoscaling.k8s.io/"


def _takes_over(o) -> str | None:
    """The HPA a ScaledObject adopts on purpose, if it says so."""
    meta = mapping(o.obj.get("metadata"))
    if str(mapping(meta.get("annotations")).get(TRANSFER, "")).lower() != "true":
        return None
    config = mapping(mapping(mapping(o.obj.get("spec")).get("advanced")).get("horizontalPodAutoscalerConfig"))
    return config.get("name") if isinstance(config.get("name"), str) else None


def check(ctx) -> Iterator[Hit]:
    by_target: dict[tuple[str, str, str], list] = defaultdict(list)
    for o in autoscalers(ctx):
        scaled = target(o, ctx.namespace)
        if scaled is not None:
            by_target[scaled].append(o)
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
    yield from _vertical_beside_horizontal(ctx, by_target)


def _vertical_beside_horizontal(ctx, by_target: dict) -> Iterator[Hit]:
    """A VerticalPodAutoscaler that applies its recommendations (updateMode Auto or Recreate, the default) to a
    workload an HPA or a ScaledObject scales on the same resource."""
    for v in ctx.of_kind("VerticalPodAutoscaler"):
        if not str(v.obj.get("apiVersion", "")).startswith(VPA_GROUP):
            continue
        spec = mapping(v.obj.get("spec"))
        mode = mapping(spec.get("updatePolicy")).get("updateMode") or "Auto"
        ref = mapping(spec.get("targetRef"))
        if mode in ("Off", "Initial") or not isinstance(ref.get("name"), str):
            continue
        horizontal = [(o, sorted(resource_metrics(o))) for o in
                      by_target.get((namespace_of(v, ctx.namespace), ref.get("kind"), ref["name"]), [])]
        named = ", ".join(f"{o.kind} {o.name} on {' and '.join(shared)}" for o, shared in horizontal if shared)
        if named:
            yield Hit("spec.updatePolicy" if "updatePolicy" in spec else "spec.targetRef",
                      f"VerticalPodAutoscaler {v.name} (updateMode {mode}) resizes the pods of {ref.get('kind')} "
                      f"{ref['name']}, which {named} scales: the VPA changes the requests the HPA's utilization is "
                      "measured against, and evicts pods to apply them, so the two chase each other (the VPA's "
                      "documented limit: not with an HPA on CPU or memory)", obj=v, severity=Severity.WARNING)

