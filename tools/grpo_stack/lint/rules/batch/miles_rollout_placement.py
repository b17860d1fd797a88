"""GRPO322 miles-rollout-placement: S10, S11, S12 of docs/batch-math.md."""

from __future__ import annotations

from collections.abc import Iterator

from ...context import LintContext
from ...finding import Hit, Severity
from ._shared import hits

CODE = "GRPO322"
NAME = "miles-rollout-placement"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "miles: rollout GPUs must exist and split into whole engines that fill whole nodes."
SHEET_IDS = ('S10', 'S11', 'S12')
FRAMEWORK = 'miles'  # None: verl and miles
DOC = """## What it does
S11 without colocate the actor must leave rollout nodes; S12 engines larger than a node span whole nodes,
and `rollout_num_gpus % rollout_num_gpus_per_engine` GPUs stay idle (warning); S10 colocate ignores
actorNodes (warning).

## Why is this bad?
miles floors the engine count without a check, so GPUs sit idle or engines straddle nodes; no rollout
GPUs means no engines at all.

## Example
```yaml
global:
  cluster: {nodes: 2, gpusPerNode: 8}
  job:
    rollout: {tensorParallel: 3}
    miles: {colocate: true}
```
Use instead:
```yaml
global:
  cluster: {nodes: 2, gpusPerNode: 8}
  job:
    rollout: {tensorParallel: 4}
    miles: {colocate: true}
```

## Fix
Use GPUs per engine that divide the rollout GPUs (listed in the message).
"""


def check(ctx: LintContext) -> Iterator[Hit]:
    yield from hits(ctx, SHEET_IDS, FRAMEWORK)
