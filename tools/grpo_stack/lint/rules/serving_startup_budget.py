"""GRPO504 serving-startup-budget."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity
from ._serving import loads_no_model_at_start, probe_budget, serving_containers

CODE = "GRPO504"
NAME = "serving-startup-budget"
SEVERITY = Severity.WARNING
CATEGORY = "correctness"
SUMMARY = ("A model server's startup budget (startupProbe, or liveness without one) is too short to load any "
           "model: it is restarted while loading.")
DOC = """## What it does
For every model-server container (as GRPO503 finds them) computes the time the kubelet allows before it
restarts the container: the startupProbe's `initialDelaySeconds + failureThreshold x periodSeconds` when there is
one, else the livenessProbe's (a liveness probe without a startupProbe runs from the container's start). It
reports a budget below 120 seconds. A server that loads no model when it starts (GRPO503 names them: Ollama
without a start-time pull, Triton in explicit model control) has nothing to load before it answers and is not
reported.

The floor is an assumption, not a sourced measurement, so a finding is a warning that names it: no load-time data is
in the reference material, so the rule flags only budgets that are clearly too short for any model server: two
minutes, before which even a small model on a local disk is rarely read, compiled and serving (vLLM also captures
CUDA graphs before its HTTP server answers). A download from the Hugging Face Hub, or a model of tens of gigabytes,
takes far longer, so a budget above the floor is no proof of enough.

## Why is this bad?
A model server answers its health endpoint only after the weights are loaded. A liveness probe that starts
failing before that makes the kubelet kill the container while it loads; it starts again, loads again, and is
killed again (CrashLoopBackOff) although nothing is wrong with it.

## Example
```yaml
livenessProbe:
  httpGet: {path: /health, port: 8000}
  initialDelaySeconds: 60
  periodSeconds: 10
```
Use instead:
```yaml
startupProbe:
  httpGet: {path: /health, port: 8000}
  periodSeconds: 10
  failureThreshold: 180   # 30 minutes to download and load
livenessProbe:
  httpGet: {path: /health, port: 8000}
  periodSeconds: 10
```

## Fix
Add a startupProbe whose failureThreshold x periodSeconds covers the download and load of the model (liveness
and readiness probes start only after it succeeds).
"""

FLOOR = 120  # seconds; an assumption (see DOC), not a measurement
ASSUMED = f"(assumed: its model takes {FLOOR} s or more to load; a small one on a local disk may not)"


def check(ctx) -> Iterator[Hit]:
    for o, pod_path, _pod, i, c in serving_containers(ctx):
        if loads_no_model_at_start(c):
            continue  # it answers as soon as it listens
        name = c.get("name", i)
        where = f"{pod_path}.containers.{i}"
        startup = probe_budget(c.get("startupProbe"))
        liveness = probe_budget(c.get("livenessProbe"))
        if startup is not None and startup < FLOOR:
            yield Hit(f"{where}.startupProbe", f"{o.kind} {o.name}: model server {name} has a startup budget of "
                      f"{startup} s (initialDelaySeconds + failureThreshold x periodSeconds), below the {FLOOR} s "
                      f"any model needs to load; the kubelet restarts it while it loads {ASSUMED}", obj=o)
        elif startup is None and liveness is not None and liveness < FLOOR:
            yield Hit(f"{where}.livenessProbe", f"{o.kind} {o.name}: model server {name} has a livenessProbe and no "
                      f"startupProbe; the liveness probe fails after {liveness} s, below the {FLOOR} s any model "
                      f"needs to load, and the kubelet kills the server while it loads {ASSUMED}", obj=o)
