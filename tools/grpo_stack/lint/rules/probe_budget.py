"""GRPO501 probe-budget."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..finding import Hit, Severity
from ._objects import containers

CODE = "GRPO501"
NAME = "probe-budget"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "A Deployment's progress deadline, or the rollout wait the docs print, is shorter than its startup budget."
DOC = """## What it does
For every Deployment with a startupProbe, computes the startup budget
`initialDelaySeconds + failureThreshold x periodSeconds` and requires `progressDeadlineSeconds` (default 600)
to be at least that. It also reads the `kubectl rollout status ... --timeout=` commands in the release notes
and requires each timeout to cover the budget of the Deployment it waits for.

## Why is this bad?
The predecessor's vLLM startupProbe allowed 90 minutes for a 235B model to load, but the Deployment kept the
600 s default deadline: `kubectl rollout status` reported ProgressDeadlineExceeded ten minutes in while the pod
was starting exactly as designed, and the script's own 20 minute wait was shorter still.

## Example
```yaml
spec:
  progressDeadlineSeconds: 600
  template:
    spec:
      containers:
        - startupProbe: {periodSeconds: 30, failureThreshold: 180}
```
Use instead:
```yaml
spec:
  progressDeadlineSeconds: 6000
```

## Fix
Make progressDeadlineSeconds (and every rollout wait) at least the startup budget; the grpo-stack vllm chart
computes it from the probe so it cannot fall behind.
"""

WAIT = re.compile(r"rollout status deploy(?:ment)?/(\S+).*?--timeout=(\d+)(s|m|h)?")


def budget(probe: dict) -> int:
    return int(probe.get("initialDelaySeconds", 0)) + int(probe.get("failureThreshold", 3)) * int(
        probe.get("periodSeconds", 10)
    )


def check(ctx) -> Iterator[Hit]:
    budgets: dict[str, int] = {}
    for o in ctx.of_kind("Deployment"):
        pod = ((o.obj.get("spec") or {}).get("template") or {}).get("spec") or {}
        probes = [c.get("startupProbe") for _, _, c in containers(pod) if c.get("startupProbe")]
        if not probes:
            continue
        need = max(budget(p) for p in probes)
        budgets[o.name] = need
        deadline = int((o.obj.get("spec") or {}).get("progressDeadlineSeconds", 600))
        if deadline < need:
            yield Hit("spec.progressDeadlineSeconds",
                      f"Deployment {o.name}: progressDeadlineSeconds {deadline} < startupProbe budget {need} s; the "
                      "rollout is reported failed while the pod is still starting", obj=o,
                      remediation=f"set progressDeadlineSeconds >= {need}")
    notes = ctx.rendered.notes if ctx.rendered else ""
    for m in WAIT.finditer(notes):
        name, value, unit = m.group(1), int(m.group(2)), m.group(3) or "s"
        seconds = value * {"s": 1, "m": 60, "h": 3600}[unit]
        if name in budgets and seconds < budgets[name]:
            yield Hit("vllm.startupProbe" if ctx.has_values else "", f"NOTES.txt waits {seconds} s for "
                      f"deploy/{name} but its startup budget is {budgets[name]} s")
