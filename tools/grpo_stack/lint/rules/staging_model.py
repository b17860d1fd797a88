"""GRPO561 staging-model-mismatch."""

from __future__ import annotations

from collections.abc import Iterator

from ...catalog.models import MODELS
from ..finding import Hit, Severity

CODE = "GRPO561"
NAME = "staging-model-mismatch"
SEVERITY = Severity.WARNING
CATEGORY = "correctness"
SUMMARY = "`fsx-utils.model.repo` is not the model `global.job.model.preset` describes."
DOC = """## What it does
When fsx-utils is enabled and `fsx-utils.model.repo` is set, compares it with the Hugging Face repository of
the model catalogue entry that `global.job.model.preset` names. Values that declare `global.job.model.shape`
describe their own model and are not compared.

## Why is this bad?
NOTES step 2 prints `grpo-models stage <fsx-utils.model.repo>`, but the batch, parallelism and memory checks
use the preset's shape. If the two differ, the run starts on weights the checks never saw, for example a
Qwen3-4B staged for a Qwen3-8B run. `grpo-models stage --values` catches this at staging. This rule catches it
before the install. A fine-tuned derivative of the preset is a legitimate reason to suppress it.

## Example
```yaml
global:
  job:
    model: {preset: qwen3-8b, path: models/Qwen3-8B}
fsx-utils:
  model: {repo: Qwen/Qwen3-4B, revision: 1cfa9a7208912126459214e8b04321603b3df60c}
```
Use instead:
```yaml
fsx-utils:
  model: {repo: Qwen/Qwen3-8B, revision: b968826d9c46dd6066d109eabc6255188de91218}
```

## Fix
Stage the preset's repository, or pick the preset (or `model.shape`) that matches the repository you stage.
"""


def check(ctx) -> Iterator[Hit]:
    if not ctx.has_values or not ctx.component_enabled("fsxUtils"):
        return
    repo = ctx.get("fsx-utils.model.repo")
    if not repo or ctx.get("global.job.model.shape"):
        return
    preset = ctx.get("global.job.model.preset")
    model = MODELS.get(preset)
    if model is not None and model.hf_id != repo:
        yield Hit("fsx-utils.model.repo", f"stages {repo}, but global.job.model.preset {preset!r} is {model.hf_id}; "
                  "the run's checks used the preset's shape", related=("global.job.model.preset",))
