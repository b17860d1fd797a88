"""GRPO350 job-command-unbuildable."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..finding import Hit, Severity

CODE = "GRPO350"
NAME = "job-command-unbuildable"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = ("The job builder cannot turn the values into the verl or miles command (e.g. an unknown or "
           "values-owned key in job.verl.overrides or job.miles.extraArgs).")
DOC = """## What it does
Builds the training command with the same builder the in-pod submit uses and reports why it refuses, at the
values key it names: a `job.verl.overrides` key that is not a verl 0.9.1 config key
(`tools/grpo_stack/catalog/verl_keys.json`) or that a typed key already sets, or whose value is not of the type
verl declares for it: its config dataclass (with OmegaConf's conversions where verl's config goes through
OmegaConf's structured merge, as given where verl instantiates it) or, under
`megatron.override_transformer_config`, megatron-core's TransformerConfig (`recompute_num_layers: 1e309`, a string
to YAML, would reach Megatron as one); a miles `extraArgs` flag that
the pinned miles/Megatron build does not have (or with the wrong number or kind of values, or one the values
already set), a model preset miles has no model script for, `resume.mode: fromPath`
without `resume.path`.

## Why is this bad?
The submit in the Ray head pod builds the same command and stops there, after the GPU nodes were requested; miles'
own parser aborts the run on an unknown flag. An override of a key the typed values own would write one fact
twice (Hydra keeps the last, silently).

## Example
```yaml
global:
  job:
    miles:
      extraArgs: ["--tensor-model-parallel-size", "4"]
```
Use instead: the typed value (`global.job.parallel.tensor: 4`), or a flag the values do not set:
```yaml
global:
  job:
    miles:
      extraArgs: ["--lr-warmup-iters", "10"]
```

## Fix
Change the key the message names; for `extraArgs`, use flags of the pinned build (`docs/miles.md`).
"""

KEY = re.compile(r"^(global\.job(?:\.[A-Za-z0-9_]+)*)")


def check(ctx) -> Iterator[Hit]:
    exc = getattr(ctx, "build_error", None)
    if exc is None or getattr(ctx, "job_spec", None) is None:
        return
    text = str(exc)
    m = KEY.match(text)
    path = m.group(1) if m else "global.job"
    if path.startswith("global.job.verl.overrides."):
        path = "global.job.verl.overrides"  # the override key itself holds dots
    yield Hit(path, text[m.end():].lstrip(": ") if m else text)
