"""GRPO521 sandbox-oversubscribed."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity
from ._quantity import quantity

CODE = "GRPO521"
NAME = "sandbox-oversubscribed"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = ("The reward service sends more concurrent code runs than twice the sandbox's CPUs, or than its memory holds "
           "with room for the server.")
DOC = """## What it does
When the reward service has a `code` route and SandboxFusion is on, compares the concurrent `/run_code` calls
the reward pods may send (`reward-service.replicas` x `reward-service.sandbox.concurrency`) with the CPUs of the
sandbox pods (`sandbox-fusion.replicas` x `sandbox-fusion.resources.cpu`), and reports more than two calls per
sandbox CPU. It also reports, as an error, when the runs one sandbox pod gets on average, each allowed
`reward-service.sandbox.memoryMb`, add up to the pod's whole memory limit or more: SandboxFusion's own server
process, its interpreters and the page cache need memory on top, so runs at their limit with none left over
get the pod OOM-killed. (The chart's default leaves 4 GiB: 8 runs x 1024 MiB in a 12Gi pod.)

## Why is this bad?
SandboxFusion enforces no concurrency limit of its own (`max_concurrency` is never read): every call starts a
process at once. Its throughput peaks at about two concurrent runs per core (measured: 71 runs/s at 4 on 2
cores, 58 at 16); beyond that each run only gets a smaller share of a core. `run_timeout` is wall-clock, so a
test program that finishes in time on its own core is killed as `TimeLimitExceeded` and scored as a failing
test case: correct code is rewarded as wrong, and more so the busier the run. The per-run memory limit is each
process's own; runs that together exceed the pod's limit get the whole sandbox pod OOM-killed, and every run in
flight on it becomes a sandbox fault.

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
the sandbox CPUs (the message gives both), and give each sandbox pod at least its runs x `memoryMb`.
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
    yield from _memory(ctx, calls, sandboxes)
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


def _memory(ctx, calls: int, sandboxes: int) -> Iterator[Hit]:
    run_mb, limit_text = ctx.get("reward-service.sandbox.memoryMb"), ctx.get("sandbox-fusion.resources.memory")
    limit = quantity(limit_text)
    if not isinstance(run_mb, int) or not limit or sandboxes < 1:
        return
    runs = calls / sandboxes  # the Service spreads connections; a pod may get more than its share
    need_mib = runs * run_mb
    if need_mib >= limit / 2**20:
        yield Hit("reward-service.sandbox.memoryMb", f"{calls} concurrent code runs over {sandboxes} sandbox pods is "
                  f"{runs:g} per pod, each allowed {run_mb} MiB: {need_mib:g} MiB, all of a {limit_text} pod limit "
                  "or more, before the server's own memory; a burst of memory-hungry programs gets the pod "
                  "OOM-killed with every run in flight on it",
                  remediation=f"set sandbox-fusion.resources.memory well above {need_mib / 1024:g}Gi, or lower "
                  "reward-service.sandbox.memoryMb or the concurrency",
                  related=("sandbox-fusion.resources.memory", "reward-service.sandbox.concurrency"))
