"""GRPO872 ray-group-name-repeated."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity
from ._objects import mapping

CODE = "GRPO872"
NAME = "ray-group-name-repeated"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = ("Two worker groups of one Ray cluster share a groupName: KubeRay's webhook refuses the cluster, and "
           "without it the operator counts one group's pods as the other's.")
DOC = """## What it does
Reads the worker groups of every KubeRay cluster spec (`ray.io`): a `RayCluster`'s `spec`, a `RayJob`'s
`spec.rayClusterSpec`, a `RayService`'s `spec.rayClusterConfig`. Two groups with the same `groupName` are an error,
at the second one.

## Why is this bad?
KubeRay's validating webhook refuses such a cluster ("worker group names must be unique",
`pkg/webhooks/v1/raycluster_webhook.go` at v1.5.0). Where the webhook is not installed (the operator's Helm chart
leaves it off), the cluster is accepted, but the operator finds each group's pods by the `ray.io/group` label it
gives them, the group's name (`raycluster_controller.go` reconcilePods): both groups count the union of their pods,
so the first creates its replicas and the second sees them as its own, creating too few or deleting the other's
workers, and a RayJob waits for workers that never come.

## Example
```yaml
workerGroupSpecs:
  - groupName: workers
    replicas: 2
  - groupName: workers      # a second group, e.g. with larger GPUs
    replicas: 1
```
Use instead:
```yaml
workerGroupSpecs:
  - groupName: workers
    replicas: 2
  - groupName: workers-large
    replicas: 1
```

## Fix
Give each worker group its own `groupName`.
"""

CLUSTER_SPECS = {"RayCluster": (), "RayJob": ("rayClusterSpec",), "RayService": ("rayClusterConfig",)}


def check(ctx) -> Iterator[Hit]:
    for kind, keys in CLUSTER_SPECS.items():
        for o in ctx.of_kind(kind):
            if not str(o.obj.get("apiVersion", "")).startswith("ray.io/"):
                continue
            spec, path = mapping(o.obj.get("spec")), "spec"
            for key in keys:
                spec, path = mapping(spec.get(key)), f"{path}.{key}"
            groups = spec.get("workerGroupSpecs")
            seen: dict[str, int] = {}
            for i, group in enumerate(groups if isinstance(groups, list) else []):
                name = mapping(group).get("groupName")
                if not isinstance(name, str):
                    continue
                if name in seen:
                    yield Hit(f"{path}.workerGroupSpecs.{i}.groupName",
                              f"{kind} {o.name}: worker groups {seen[name]} and {i} are both named {name!r}; "
                              "KubeRay's webhook refuses the cluster, and without it the operator finds both "
                              "groups' pods by that one name, so each counts the other's workers as its own",
                              obj=o)
                else:
                    seen[name] = i
