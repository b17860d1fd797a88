"""GRPO550 reward-routing."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity

CODE = "GRPO550"
NAME = "reward-routing"
SEVERITY = Severity.ERROR
SUMMARY = "The reward service's routing table cannot score what the run asks for."
DOC = """## What it does
Checks `reward-service.routes` (data_source -> scorer) against the components and the job: a `code` route needs
`global.components.sandboxFusion`; `reward.kind: sandbox` needs the reward service (it scores code through
SandboxFusion) and at least one `code` route.

## Why is this bad?
A `code` route without a sandbox stops the reward service at start (CrashLoopBackOff). `reward.kind: sandbox` with no
code route refuses every code sample with `unknown_source`; without the reward service the run would fall back to
verl's default scorer, which scores a sandbox outage as a wrong answer (0.0).

## Example
```yaml
global:
  components:
    sandboxFusion: false
reward-service:
  routes:
    codeparrot/apps: code
```
Use instead:
```yaml
global:
  components:
    sandboxFusion: true
reward-service:
  routes:
    codeparrot/apps: code
```

## Fix
Enable `global.components.sandboxFusion` for code routes, and route the code datasets' data_source to `code`.
"""


def check(ctx) -> Iterator[Hit]:
    if not ctx.has_values:
        return
    routes = ctx.get("reward-service.routes") or {}
    code_sources = sorted(source for source, scorer in routes.items() if scorer == "code") if isinstance(
        routes, dict) else []
    if ctx.component_enabled("rewardService") and code_sources and not ctx.component_enabled("sandboxFusion"):
        yield Hit(f"reward-service.routes.{code_sources[0]}",
                  f"{len(code_sources)} data_source(s) routed to the code scorer but global.components.sandboxFusion "
                  "is false: the reward service would refuse to start",
                  remediation="set global.components.sandboxFusion: true", related=("global.components.sandboxFusion",))
    if ctx.get("global.job.reward.kind") == "sandbox":
        if not ctx.component_enabled("rewardService"):
            yield Hit("global.job.reward.kind", "reward.kind is 'sandbox' but global.components.rewardService is "
                      "false: code is scored by the reward service through SandboxFusion",
                      remediation="set global.components.rewardService: true",
                      related=("global.components.rewardService",))
        elif not code_sources:
            yield Hit("global.job.reward.kind", "reward.kind is 'sandbox' but reward-service.routes has no `code` "
                      "route: every code sample would be refused as unknown_source",
                      remediation="route the code datasets' data_source to `code` in reward-service.routes",
                      related=("reward-service.routes",))
