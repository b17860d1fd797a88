"""GRPO522 reward-deadline-mismatch."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity

CODE = "GRPO522"
NAME = "reward-deadline-mismatch"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = ("The reward service's deadlines, as the chart derives them from the trainer's reward timeout, do not fit "
           "that timeout or the service's own per-sample limits.")
DOC = """## What it does
Reads the reward-service Deployment as the chart renders it: the trainer's reward-client timeout it was derived
from (annotation `grpo-stack.io/reward-client-timeout-seconds`), the per-request deadline `REWARD_DEADLINE_S`,
the preStop delay and `terminationGracePeriodSeconds` (charts/grpo-stack/charts/reward-service/templates/
_deadlines.tpl derives all of them from `global.job.reward.timeoutSeconds`, or the framework's own client
timeout). It reports, as errors:
- a preStop delay plus deadline that reaches the client timeout: a request accepted as the pod starts terminating
  could be answered after its client gave up;
- a grace period shorter than the preStop delay plus the deadline: the kubelet kills requests it had accepted;
- a deadline at or below `reward-service.hardTimeoutSeconds` (the service refuses to start), or, with a `code`
  route, below one sandbox attempt (`2 x sandbox.runTimeoutSeconds + 5 s`): a code sample whose tests run long is
  answered 503 instead of scored;
- `global.job.reward.timeoutSeconds` under framework miles: miles' `remote_rm` has no timeout setting (it uses
  aiohttp's default, 300 s), so the value changes the service's deadlines and not the client's.

## Why is this bad?
A reward client that times out before the service answers fails the sample: miles fails the rollout at once (no
retry), slime and the verl client send it again while the first copy is still queued, doubling the load exactly when
the service is behind. A pod killed mid-drain answers its queued requests with errors, and a trainer step fails
during an ordinary `helm upgrade`.

## Example
```yaml
global:
  job:
    reward:
      kind: service
      timeoutSeconds: 20
```
A 10 s deadline and a 15 s preStop delay: a request accepted as the pod starts terminating may be answered 25 s
later, after the 20 s client timeout. Use instead:
```yaml
global:
  job:
    reward:
      kind: service
      timeoutSeconds: 120
```

## Fix
Raise `global.job.reward.timeoutSeconds` (verl) until the derived deadline holds the service's per-sample limits
and the preStop delay plus the deadline stays below it, or lower `reward-service.hardTimeoutSeconds` and
`reward-service.sandbox.runTimeoutSeconds`; under miles, delete `global.job.reward.timeoutSeconds`.
"""

CLIENT_TIMEOUT_ANNOTATION = "grpo-stack.io/reward-client-timeout-seconds"
# One sandbox attempt may take 2 x run timeout + this (reward_service/sandbox.py HTTP_MARGIN_S).
SANDBOX_MARGIN_S = 5


def check(ctx) -> Iterator[Hit]:
    if not ctx.has_values:
        return
    if ctx.get("global.job.framework") == "miles" and ctx.get("global.job.reward.timeoutSeconds") is not None:
        yield Hit("global.job.reward.timeoutSeconds",
                  "miles' reward client (remote_rm) has no timeout setting: it waits aiohttp's default 300 s "
                  "whatever this says, while the reward service would derive its deadlines from this value",
                  remediation="delete global.job.reward.timeoutSeconds under framework miles")
    if not ctx.component_enabled("rewardService"):
        return
    timing = _rendered_timing(ctx)
    if timing is None:
        return
    deployment, client, deadline, pre_stop, grace = timing
    key = "global.job.reward.timeoutSeconds"
    if pre_stop + deadline >= client:
        yield Hit(key, f"the reward pod may answer a request up to {pre_stop + deadline:g} s after its deletion "
                  f"starts (preStop {pre_stop:g} s + deadline {deadline:g} s), not before the trainer's "
                  f"{client:g} s reward timeout: a request accepted as the pod starts terminating can be answered "
                  "after its client gave up",
                  remediation=f"set {key} above {2 * pre_stop:g} (the deadline is half of it)")
    if grace < pre_stop + deadline:
        yield Hit("spec.template.spec.terminationGracePeriodSeconds",
                  f"terminationGracePeriodSeconds {grace:g} s is shorter than the preStop delay plus the deadline "
                  f"({pre_stop + deadline:g} s): the kubelet kills requests the pod accepted",
                  remediation="render the Deployment from the chart's reward-service.timing helper", obj=deployment)
    hard = ctx.get("reward-service.hardTimeoutSeconds")
    if isinstance(hard, int | float) and deadline <= hard:
        yield Hit("reward-service.hardTimeoutSeconds", f"the per-sample kill ({hard:g} s) is not below the "
                  f"service's deadline ({deadline:g} s, half the trainer's {client:g} s reward timeout): the service "
                  "refuses to start (REWARD_DEADLINE_S must exceed REWARD_HARD_TIMEOUT_S)",
                  remediation=f"lower reward-service.hardTimeoutSeconds below {deadline:g}, or raise {key}",
                  related=(key,))
    routes = ctx.get("reward-service.routes") or {}
    run = ctx.get("reward-service.sandbox.runTimeoutSeconds")
    if isinstance(routes, dict) and "code" in routes.values() and isinstance(run, int | float):
        attempt = 2 * run + SANDBOX_MARGIN_S
        if deadline < attempt:
            yield Hit("reward-service.sandbox.runTimeoutSeconds", f"one sandbox attempt may take {attempt:g} s "
                      f"(2 x {run:g} s + {SANDBOX_MARGIN_S} s), longer than the service's {deadline:g} s deadline "
                      f"(half the trainer's {client:g} s reward timeout): a code sample whose tests run long is "
                      "answered 503 instead of scored",
                      remediation=f"lower reward-service.sandbox.runTimeoutSeconds to at most "
                      f"{max(1, (deadline - SANDBOX_MARGIN_S) // 2):g}, or raise {key}",
                      related=(key,))


def _rendered_timing(ctx):
    """(Deployment, client timeout, deadline, preStop, grace) of the rendered reward-service Deployment, or None."""
    for obj in ctx.of_kind("Deployment"):
        labels = (obj.obj.get("metadata") or {}).get("labels") or {}
        if labels.get("app.kubernetes.io/name") != "reward-service":
            continue
        try:
            client = float(obj.obj["metadata"]["annotations"][CLIENT_TIMEOUT_ANNOTATION])
            pod = obj.obj["spec"]["template"]["spec"]
            container = pod["containers"][0]
            env = {item["name"]: item.get("value") for item in container.get("env", [])}
            return (obj, client, float(env["REWARD_DEADLINE_S"]),
                    float(container["lifecycle"]["preStop"]["sleep"]["seconds"]),
                    float(pod["terminationGracePeriodSeconds"]))
        except (KeyError, TypeError, ValueError, IndexError):
            return None
    return None
