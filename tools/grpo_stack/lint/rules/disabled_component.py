"""GRPO611 disabled-component-values."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity

CODE = "GRPO611"
NAME = "disabled-component-values"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "Keys set for a subchart whose global.components switch is off: nothing renders them."
DOC = """## What it does
Reports keys a values file sets under a subchart section (`sandbox-fusion:`, `reward-service:`, `fsx-utils:`)
while its `global.components` switch is false. The evaluation sections (`vllm:`, `lm-eval:`) are exempt: a run's
values file carries them for its evaluation release (`-f values/eval/eval.yaml` turns both on, docs/eval.md),
where they are linted with the overlay as base.

## Why is this bad?
Helm does not render a disabled subchart, so every key under it is read by nothing: a setting that looks
applied and is not (the verl review's "config keys nothing reads").

## Example
```yaml
global:
  components:
    sandboxFusion: false
sandbox-fusion:
  replicas: 4
```
Use instead:
```yaml
global:
  components:
    sandboxFusion: true
sandbox-fusion:
  replicas: 4
```

## Fix
Turn the component on in `global.components`, or delete the section.
"""

COMPONENTS = {"sandbox-fusion": "sandboxFusion", "reward-service": "rewardService", "fsx-utils": "fsxUtils"}


def check(ctx) -> Iterator[Hit]:
    if ctx.values_file is None or not ctx.has_values:
        return
    for section, component in COMPONENTS.items():
        own = ctx.values_file.data.get(section)
        if not isinstance(own, dict) or ctx.component_enabled(component):
            continue
        for key in own:
            if key in ("global", "grpo-common"):
                continue
            yield Hit(f"{section}.{key}", f"{section}.{key} is set but global.components.{component} is false: "
                      "the subchart is not rendered, so nothing reads it",
                      remediation=f"set global.components.{component}: true, or delete {section}.{key}",
                      related=(f"global.components.{component}",))
