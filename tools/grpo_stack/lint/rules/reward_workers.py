"""GRPO520 reward-workers-resources."""

from __future__ import annotations

import math
from collections.abc import Iterator

from ..finding import Hit, Severity
from ._objects import containers, values_section
from ._quantity import quantity

CODE = "GRPO520"
NAME = "reward-workers-resources"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "The reward service's scoring workers do not fit the CPUs or the memory its container is given."
DOC = """## What it does
For every reward-service container (one that sets `REWARD_ROUTES`, the variable the image cannot start
without), reads its worker count (`REWARD_WORKERS`; unset, the image starts one per CPU of its cgroup quota,
rounded up, or per CPU of the node without a limit) and its worker memory cap (`REWARD_WORKER_MEMORY_MB`,
default 2048), and compares them with the container's CPU limit (its request without one) and memory limit:

- more workers than CPUs is an error; two or more CPUs beyond one per worker is a warning (the HTTP process
  needs at most one);
- a memory limit below workers x cap + 512 MiB is an error (the sizing docs/reward-service.md gives);
- no CPU limit and no `REWARD_WORKERS` is a warning: the worker count is then the node's CPU count.

From a values file this is `reward-service.workers` against `reward-service.resources` (the chart renders both).

## Why is this bad?
Scoring is CPU-bound and its deadlines are wall-clock: math-verify's own timeout (1 s, about 3x the slowest
legitimate score) and the per-sample kill (`hardTimeoutSeconds`). Workers that share fewer cores are throttled
by the CFS quota, the deadlines fire on answers a whole core scores in time, and correct answers come back
`timeout` with reward 0.0: the policy is trained on a wrong reward while the service reports itself healthy. A
memory limit below the workers' own caps lets the kernel's OOM killer act before a worker's `RLIMIT_AS` does:
a worker dies mid-sample (`worker_died`, reward 0.0) or the server process goes and the pod restarts with
every in-flight sample.

## Example
```yaml
reward-service:
  resources: {cpu: "2", memory: 4Gi}
  workers: 4
```
Use instead (one worker per CPU, one CPU for the HTTP process, 2 GiB per worker + 0.5 GiB):
```yaml
reward-service:
  resources: {cpu: "5", memory: 9Gi}
  workers: 4
```

## Fix
Set `reward-service.workers` to the CPU count less one (at most the CPU count), and the memory to at least
workers x 2 GiB + 0.5 GiB (the message gives the numbers).
"""

DEFAULT_WORKER_MEMORY_MB = 2048  # images/reward-service/reward_service/config.py Settings.worker_memory_mb
SERVER_MEMORY_MB = 512  # the HTTP process and the forkserver (docs/reward-service.md: "+ 0.5 GiB")


def _env(container: dict) -> dict[str, object]:
    """name -> literal value (None where the value comes from a reference)."""
    out: dict[str, object] = {}
    items = container.get("env")
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            out[item["name"]] = item.get("value") if "valueFrom" not in item else None
    return out


def _int(text: object) -> int | None:
    try:
        return int(str(text).strip())
    except ValueError:
        return None


def check(ctx) -> Iterator[Hit]:
    for o, pod_path, pod in ctx.pod_templates():
        if o.is_test_hook:
            continue
        section = values_section(ctx, o, pod_path)
        for field, i, c in containers(pod):
            env = _env(c)
            if "REWARD_ROUTES" not in env:
                continue
            path = f"{pod_path}.{field}.{i}"
            yield from _check_container(o, c, env, path, section)


def _check_container(o, c: dict, env: dict, path: str, section: str | None) -> Iterator[Hit]:
    res = c.get("resources") if isinstance(c.get("resources"), dict) else {}
    limits = res.get("limits") if isinstance(res.get("limits"), dict) else {}
    requests = res.get("requests") if isinstance(res.get("requests"), dict) else {}
    cpu_text = limits.get("cpu", requests.get("cpu"))
    cpu = quantity(cpu_text)
    who = f"{o.kind} {o.name}: container {c.get('name', '?')}"

    def at(values_key: str, object_path: str) -> dict:
        return dict(key_path=values_key) if section else dict(key_path=object_path, obj=o)

    workers_set = "REWARD_WORKERS" in env
    workers = _int(env["REWARD_WORKERS"]) if workers_set and env["REWARD_WORKERS"] is not None else None
    if workers_set and (workers is None or workers < 1):
        return  # from a reference, or a value the image refuses at start: nothing to compare
    if workers is None:  # the image's default: one worker per CPU of the cgroup quota, rounded up
        if "cpu" not in limits:
            yield Hit(**at(f"{section}.workers", f"{path}.env"), severity=Severity.WARNING,
                      message=f"{who} sets no REWARD_WORKERS and no CPU limit: the service starts one scoring "
                      "worker per CPU of whatever node it lands on, whatever it requested",
                      remediation="set REWARD_WORKERS to the CPU request less one, or give the container a CPU "
                      "limit")
            cpu = None
        elif quantity(limits["cpu"]):
            workers = max(1, math.ceil(quantity(limits["cpu"])))
    if workers is not None and cpu:
        cpu_at = at(f"{section}.workers", f"{path}.resources")
        if workers > cpu:
            yield Hit(**cpu_at, related=(f"{section}.resources.cpu",) if section else (),
                      message=f"{who} runs {workers} CPU-bound scoring workers on {cpu_text} CPU: each gets "
                      f"{cpu / workers:.2g} of a core, so the wall-clock scoring timeouts fire on answers a whole "
                      "core scores in time and correct answers are rewarded 0.0 (`timeout`)",
                      remediation=f"set {section + '.workers' if section else 'REWARD_WORKERS'} to at most "
                      f"{max(1, math.floor(cpu) - 1)} (one CPU for the HTTP process), or raise the CPU to "
                      f"{workers + 1}")
        elif cpu - workers >= 2:
            yield Hit(**cpu_at, severity=Severity.WARNING, related=(f"{section}.resources.cpu",) if section else (),
                      message=f"{who} requests {cpu_text} CPU for {workers} scoring workers; the HTTP process "
                      f"needs at most one, so {math.floor(cpu - workers - 1)} CPU(s) stay idle",
                      remediation=f"set {section + '.workers' if section else 'REWARD_WORKERS'} to "
                      f"{math.floor(cpu) - 1}, or request {workers + 1} CPU")
    yield from _memory(env, limits, workers, who, at, path, section)


def _memory(env, limits, workers, who, at, path, section) -> Iterator[Hit]:
    if workers is None or "memory" not in limits:
        return
    cap = _int(env["REWARD_WORKER_MEMORY_MB"]) if "REWARD_WORKER_MEMORY_MB" in env else DEFAULT_WORKER_MEMORY_MB
    if cap is None:
        return
    need_mib = workers * cap + SERVER_MEMORY_MB
    have = quantity(limits["memory"])
    if have is not None and have / 2**20 < need_mib:
        yield Hit(**at(f"{section}.resources.memory", f"{path}.resources.limits.memory"),
                  related=(f"{section}.workers",) if section else (),
                  message=f"{who} has a {limits['memory']} memory limit for {workers} workers capped at {cap} MiB "
                  f"each: {workers} x {cap} + {SERVER_MEMORY_MB} MiB = {need_mib} MiB; the OOM killer acts before "
                  "a worker's own cap and a sample dies mid-score (`worker_died`, reward 0.0) or the pod restarts",
                  remediation=f"set the memory limit to at least {math.ceil(need_mib / 1024 * 2) / 2:g}Gi, or run "
                  "fewer workers")
