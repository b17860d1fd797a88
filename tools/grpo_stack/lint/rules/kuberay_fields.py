"""GRPO352 kuberay-field-ignored."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity

CODE = "GRPO352"
NAME = "kuberay-field-ignored"
SEVERITY = Severity.WARNING
CATEGORY = "correctness"
SUMMARY = ("A rendered RayCluster or RayJob sets a field the KubeRay release in `global.run.kuberayVersion` "
           "does not know: its API server drops it and its operator never acts on it.")
DOC = """## What it does
Reads the KubeRay release the values declare (`global.run.kuberayVersion`) and, for each rendered RayCluster and
RayJob, reports every field that release's CRD lacks. The fields are the difference between the CRDs of KubeRay
v1.5.0 and v1.6.0 (`config/crd/bases` of `github.com/ray-project/kuberay/ray-operator` at those tags, from the Go
module proxy) and v1.7.0's (`grpo_stack/crds`), at the RayCluster and RayJob level (pod templates are Kubernetes'
own). A structural CRD schema prunes unknown fields, so the object is accepted and the field silently disappears.

## Why is this bad?
The chart's RayCluster asks for `upgradeStrategy: Recreate` so that a changed pod template recreates the Ray pods
on `helm upgrade`. Under v1.5.0 the field is pruned: the upgrade changes the RayCluster and the running pods stay
as they were, with the old image or the old environment.

## Example
```yaml
global:
  run:
    kuberayVersion: "1.5.0"   # the chart renders spec.upgradeStrategy
```
Use instead:
```yaml
global:
  run:
    kuberayVersion: "1.7.0"   # after upgrading the operator and its CRDs
```

## Fix
Upgrade the KubeRay operator and its CRDs to v1.7.0 (grpo-lint --cluster GRPO961 reports the running release), or
delete the Ray pods by hand after each `helm upgrade` that changes them.
"""

# Fields of v1.7.0's RayCluster spec that older releases' CRDs lack (a RayJob's rayClusterSpec is the same type).
CLUSTER_NOT_IN_1_6_0 = ("spec.autoscalerOptions.args", "spec.autoscalerOptions.command",
                        "spec.gcsFaultToleranceOptions.backend", "spec.gcsFaultToleranceOptions.storage",
                        "spec.headGroupSpec.ingressOptions", "spec.historyServerOptions", "spec.networkPolicy",
                        "spec.tlsOptions", "spec.workerGroupSpecs[].priority")
CLUSTER_NOT_IN_1_5_0 = (*CLUSTER_NOT_IN_1_6_0, "spec.authOptions", "spec.upgradeStrategy")


def _in_rayjob(paths: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(p.replace("spec.", "spec.rayClusterSpec.", 1) for p in paths)


# Per declared release, per kind: the paths its CRD lacks (`[]` = every list item).
MISSING = {
    "1.5.0": {"RayCluster": CLUSTER_NOT_IN_1_5_0,
              "RayJob": ("spec.deletionStrategy.deletionRules[].condition.jobDeploymentStatus",
                         "spec.preRunningDeadlineSeconds", *_in_rayjob(CLUSTER_NOT_IN_1_5_0))},
    "1.6.0": {"RayCluster": CLUSTER_NOT_IN_1_6_0, "RayJob": _in_rayjob(CLUSTER_NOT_IN_1_6_0)},
    "1.7.0": {},
}
KEY = "global.run.kuberayVersion"


def present(node, parts: list[str], at: str = "") -> list[str]:
    """The concrete paths (list indices filled in) where the dotted path with `[]` holds a value."""
    if not parts:
        return [at]
    head, rest = parts[0], parts[1:]
    many = head.endswith("[]")
    key = head[:-2] if many else head
    if not isinstance(node, dict) or key not in node or node[key] is None:
        return []
    here = f"{at}.{key}" if at else key
    if not many:
        return present(node[key], rest, here)
    items = node[key] if isinstance(node[key], list) else []
    return [p for i, item in enumerate(items) for p in present(item, rest, f"{here}.{i}")]


def check(ctx) -> Iterator[Hit]:
    if not ctx.has_values:
        return
    version = str(ctx.get(KEY) or "")
    missing = MISSING.get(version, {})
    for o in ctx.of_kind("RayCluster", "RayJob"):
        for field in missing.get(o.kind, ()):
            for path in present(o.obj, field.split(".")):
                yield Hit(KEY, f"{o.kind} {o.name} sets {path}, which KubeRay v{version}'s CRD lacks: the API server "
                          "drops it and the operator never sees it", related=(KEY,))
