"""GRPO550 reward-routing."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity

CODE = "GRPO550"
NAME = "reward-routing"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "The reward service's routing table cannot score what the run asks for."
DOC = """## What it does
Checks `reward-service.routes` (data_source -> scorer) against the components, the job and the data the release
prepares: a `code` route needs `global.components.sandboxFusion`; `reward.kind: sandbox` needs the reward service
(it scores code through SandboxFusion) and at least one `code` route; and when the run is scored by the reward
service, every dataset in `fsx-utils.data.train` / `val` must have its `data_source` routed (the grpo-data
registry names it), to a scorer of its kind (a code set to `code`, a math set to `math` or `exact_match`).

## Why is this bad?
A `code` route without a sandbox stops the reward service at start (CrashLoopBackOff). `reward.kind: sandbox` with no
code route refuses every code sample with `unknown_source`; without the reward service the run would fall back to
verl's default scorer, which scores a sandbox outage as a wrong answer (0.0). A prepared dataset whose data_source
has no route is refused sample by sample (`unknown_source`) from the first step; one routed to the wrong kind of
scorer turns every answer into a zero.

## Example
```yaml
global:
  components:
    sandboxFusion: false
reward-service:
  routes:
    apps: code
```
Use instead:
```yaml
global:
  components:
    sandboxFusion: true
reward-service:
  routes:
    apps: code
```

## Fix
Enable `global.components.sandboxFusion` for code routes, and route the code datasets' data_source to `code`.
"""


def check(ctx) -> Iterator[Hit]:
    # Values, or in the pod the job spec alone (its release.values): every fact through ctx.release_value.
    if not ctx.has_values and not ctx.job_spec:
        return
    routes = ctx.release_value("reward-service.routes") or {}
    code_sources = sorted(source for source, scorer in routes.items() if scorer == "code") if isinstance(
        routes, dict) else []
    if _enabled(ctx, "rewardService") and code_sources and not _enabled(ctx, "sandboxFusion"):
        yield Hit(f"reward-service.routes.{code_sources[0]}",
                  f"{len(code_sources)} data_source(s) routed to the code scorer but global.components.sandboxFusion "
                  "is false: the reward service would refuse to start",
                  remediation="set global.components.sandboxFusion: true", related=("global.components.sandboxFusion",))
    if ctx.release_value("global.components.raycluster") is False:
        return  # an evaluation release: no training runs, nothing is scored (docs/eval.md)
    scored_by_service = ctx.release_value("global.job.reward.kind") in ("service", "sandbox")
    if scored_by_service and _enabled(ctx, "rewardService") and _enabled(ctx, "fsxUtils") and \
            isinstance(routes, dict):
        yield from _dataset_routes(ctx, routes)
    if ctx.release_value("global.job.reward.kind") == "sandbox":
        if not _enabled(ctx, "rewardService"):
            yield Hit("global.job.reward.kind", "reward.kind is 'sandbox' but global.components.rewardService is "
                      "false: code is scored by the reward service through SandboxFusion",
                      remediation="set global.components.rewardService: true",
                      related=("global.components.rewardService",))
        elif not code_sources:
            yield Hit("global.job.reward.kind", "reward.kind is 'sandbox' but reward-service.routes has no `code` "
                      "route: every code sample would be refused as unknown_source",
                      remediation="route the code datasets' data_source to `code` in reward-service.routes",
                      related=("reward-service.routes",))


def _enabled(ctx, component: str) -> bool:
    return bool(ctx.release_value(f"global.components.{component}", False))


SCORERS_FOR = {"math": ("math", "exact_match"), "code": ("code",)}


def _dataset_routes(ctx, routes: dict) -> Iterator[Hit]:
    """Each dataset the release prepares (fsx-utils.data) is routed, to a scorer of its kind."""
    from ...data.adapters import REGISTRY

    for split in ("train", "val"):
        for i, spec in enumerate(ctx.release_value(f"fsx-utils.data.{split}") or []):
            adapter = REGISTRY.get(str(spec).split(":", 1)[0])
            if adapter is None:
                continue  # GRPO560 reports an unknown dataset
            scorer = routes.get(adapter.data_source)
            if scorer is None:
                yield Hit(f"fsx-utils.data.{split}.{i}", f"dataset {adapter.name} is prepared with data_source "
                          f"{adapter.data_source!r}, which reward-service.routes does not route: every sample "
                          "would be refused as unknown_source",
                          remediation=f"add `{adapter.data_source}: {adapter.ability}` to reward-service.routes",
                          related=("reward-service.routes",))
            elif scorer not in SCORERS_FOR.get(adapter.ability, (scorer,)):
                yield Hit(f"reward-service.routes.{adapter.data_source}", f"{adapter.data_source!r} ({adapter.name}, "
                          f"{adapter.ability}) is routed to the {scorer} scorer", related=(f"fsx-utils.data.{split}",))
