"""GRPO612 job-build."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..finding import Hit, Severity

CODE = "GRPO612"
NAME = "job-build"
SEVERITY = Severity.ERROR
SUMMARY = "The job builder refuses the values (e.g. an unknown or typed-owned key in job.verl.overrides)."
DOC = """## What it does
Runs the one job builder (`grpo_stack.job`) on the job spec the chart renders, as the recipe does in the Ray head
pod, and reports its refusal at the values key it names. Among others: `job.verl.overrides` keys must be verl
0.9.1 config keys (`tools/grpo_stack/catalog/verl_keys.json`) that no typed key sets.

## Why is this bad?
The recipe would stop in the head pod with the same message, after the GPU nodes were requested. An override
of a key the typed values own would write one fact twice (Hydra keeps the last, silently).

## Example
```yaml
global:
  job:
    verl:
      overrides:
        actor_rollout_ref.actor.optim.lr: 1.0e-5
```
Use instead:
```yaml
global:
  job:
    optim:
      lr: 1.0e-5
```

## Fix
Change the key the message names (for an override: use the typed key it names, or a real verl config key).
"""

KEY = re.compile(r"^(global\.job(?:\.[A-Za-z0-9_]+)*)")


def check(ctx) -> Iterator[Hit]:
    error = ctx.build_error
    if error is None:
        return
    text = str(error)
    found = KEY.match(text)
    path = found.group(1) if found else "global.job"
    if path.startswith("global.job.verl.overrides."):
        path = "global.job.verl.overrides"  # the override key itself holds dots
    yield Hit(path, text)
