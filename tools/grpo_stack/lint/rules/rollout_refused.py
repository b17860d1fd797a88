"""GRPO619 rollout-strategy-refused."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity
from ._rollout import rolling_update

CODE = "GRPO619"
NAME = "rollout-strategy-refused"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "A Deployment sets both maxSurge and maxUnavailable to 0: the API server refuses it."
DOC = """## What it does
Finds Deployments whose `RollingUpdate` strategy sets `maxSurge` and `maxUnavailable` both to zero (`0` or
`0%`), the usual attempt at "never run two GPU pods and never go down".

## Why is this bad?
A rollout with neither a surge pod nor an unavailable one cannot replace any pod, so the API server refuses the
object (`spec.strategy.rollingUpdate.maxUnavailable: Invalid value: ... may not be 0 when maxSurge is 0`,
`ValidateRollingUpdateDeployment` in kubernetes/pkg/apis/apps/validation): `kubectl apply` and `helm install`
fail. (Percentages that only round down to zero pass validation; the Deployment controller then lets one pod be
unavailable.)

## Example
```yaml
strategy:
  rollingUpdate: {maxSurge: 0, maxUnavailable: 0}
```
Use instead:
```yaml
strategy:
  rollingUpdate: {maxSurge: 0, maxUnavailable: 1}
```

## Fix
Allow one unavailable pod (`maxUnavailable: 1`) when GPUs cannot be spared for a surge pod, or use
`type: Recreate`.
"""


def _zero(value) -> bool:
    return not isinstance(value, bool) and (value == 0 or str(value).strip() in ("0", "0%"))


def check(ctx) -> Iterator[Hit]:
    for o in ctx.of_kind("Deployment"):
        params = rolling_update(o.obj)
        if params is not None and _zero(params["maxSurge"]) and _zero(params["maxUnavailable"]):
            yield Hit("spec.strategy.rollingUpdate.maxUnavailable", f"Deployment {o.name}: maxSurge and "
                      "maxUnavailable are both 0; the API server refuses it (maxUnavailable may not be 0 when "
                      "maxSurge is 0)", obj=o)
