"""GRPO305 verl-rollout-settings: V8, V9 of docs/batch-math.md."""

from __future__ import annotations

from collections.abc import Iterator

from ...context import LintContext
from ...finding import Hit, Severity
from ._shared import hits

CODE = "GRPO305"
NAME = "verl-rollout-settings"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "verl: sampled validation needs temperature > 0; vLLM serves LoRA ranks up to 512 from a fixed list."
SHEET_IDS = ('V8', 'V9')
FRAMEWORK = 'verl'  # None: verl and miles
DOC = """## What it does
V8: `rollout.val_kwargs.do_sample` needs `rollout.temperature > 0`. V9: a LoRA rank above 512 is
rejected by vLLM; a rank between the supported values (1, 8, 16, 32, 64, 128, 256, 320, 512) is served
as the next larger one (warning).

## Why is this bad?
Both are startup errors in validate_config. A rank that is rounded up allocates adapter memory for
the larger rank in every vLLM engine.

## Example
```yaml
global:
  job:
    lora: {rank: 100, alpha: 200, targetModules: all-linear}
```
Use instead:
```yaml
global:
  job:
    lora: {rank: 128, alpha: 256, targetModules: all-linear}
```

## Fix
Use a LoRA rank from vLLM's list; keep the temperature positive when validation samples.
"""


def check(ctx: LintContext) -> Iterator[Hit]:
    yield from hits(ctx, SHEET_IDS, FRAMEWORK)
