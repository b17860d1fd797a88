"""GRPO521 sandbox-oversubscribed."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity
from ._quantity import quantity

CODE = "GRPO521"
NAME = "sandbox-oversubscribed"
SEVERITY = Severity.ERROR
SUMMARY = "The reward service sends more concurrent code runs than twice the sandbox's CPUs."
DOC = """## What it does
When the reward service has a `code` route and SandboxFusion is on, compares the concurrent `/run_code` calls
the reward pods may send (`reward-service.replicas` x `reward-service.sandbox.concurrency`) with the CPUs of the
sandbox pods (`sandbox-fusion.replicas` x `sandbox-fusion.resources.cpu`), and reports more than two calls per
sandbox CPU.

## Why is this bad?
SandboxFusion enforces no concurrency limit of its own (`max_concurrency` is never read): every call starts a
process at once. Its throughput peaks at about two concurrent runs per core (measured: 71 runs/s at 4 on 2
cores, 58 at 16); beyond that each run only gets a smaller share of a core. `run_timeout` is wall-clock, so a
test program that finishes in time on its own core is killed as `TimeLimitExceeded` and scored as a failing
test case: correct code is rewarded as wrong, and more so the busier the run.

## Example
```yaml
reward-service:
  replicas: 2
  sandbox: {concurrency: 16}
sandbox-fusion:
  replicas: 2
  resources: {cpu: "4"}
```
32 calls on 8 sandbox CPUs. Use instead:
```yaml
reward-service:
  replicas: 2
  sandbox: {concurrency: 8}
```

## Fix
Lower `reward-service.sandbox.concurrency`, or add sandbox replicas or CPUs, until the calls are at most twice
the sandbox CPUs (the message gives both).
"""

CALLS_PER_CPU = 2  # where SandboxFusion's throughput peaks (the measurement in DOC)


def check(ctx) -> Iterator[Hit]:
    if not ctx.has_values or not (ctx.component_enabled("rewardService") and ctx.component_enabled("sandboxFusion")):
        return
    routes = ctx.get("reward-service.routes") or {}
    if not isinstance(routes, dict) or "code" not in routes.values():
        return  # no sample reaches the sandbox
    replicas, per_pod = ctx.get("reward-service.replicas"), ctx.get("reward-service.sandbox.concurrency")
    sandboxes, cpu_text = ctx.get("sandbox-fusion.replicas"), ctx.get("sandbox-fusion.resources.cpu")
    per_sandbox = quantity(cpu_text)
    if not all(isinstance(v, int) for v in (replicas, per_pod, sandboxes)) or not per_sandbox:
        return
    cpus = sandboxes * per_sandbox
    calls = replicas * per_pod
    if cpus and calls > CALLS_PER_CPU * cpus:
        timeout = ctx.get("reward-service.sandbox.runTimeoutSeconds")
        share = f"; a test case's {timeout:g} s run timeout then buys about {timeout * cpus / calls:.2g} s of CPU" \
            if isinstance(timeout, int | float) else ""
        yield Hit("reward-service.sandbox.concurrency",
                  f"the reward service sends up to {calls} concurrent code runs ({replicas} pods x {per_pod}) to "
                  f"{cpus:g} sandbox CPUs ({sandboxes} pods x {cpu_text}): {calls / cpus:.2g} per CPU, past the "
                  f"{CALLS_PER_CPU} where SandboxFusion's throughput peaks{share}, and slow-but-correct programs "
                  "are scored as time-limit failures",
                  remediation=f"set reward-service.sandbox.concurrency to at most "
                  f"{max(1, int(CALLS_PER_CPU * cpus // replicas))}, or add sandbox replicas or CPUs",
                  related=("reward-service.replicas", "sandbox-fusion.replicas", "sandbox-fusion.resources.cpu"))
