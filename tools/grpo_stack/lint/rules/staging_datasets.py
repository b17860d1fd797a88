"""GRPO560 staging-datasets."""

from __future__ import annotations

from collections.abc import Iterator

from ...data.adapters import REGISTRY
from ..finding import Hit, Severity

CODE = "GRPO560"
NAME = "staging-datasets"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "A dataset in `fsx-utils.data` would make the grpo-data command NOTES prints fail."
DOC = """## What it does
Checks the datasets that `fsx-utils.data` names for the `grpo-data prepare` and `grpo-data holdout` commands
printed by NOTES step 2, against grpo-data's adapter registry:
- every `train` source has a `train` split;
- every `val` source has a `test` or `valid` split.

Every source is pinned to a commit in its adapter; `fsx-utils.data.revisions` only overrides one with another
commit (the schema accepts nothing but 40-hex commits there).

## Why is this bad?
Each of these makes the printed command exit 2 on the cluster, after the install: AIME 2024 is an evaluation
set with no training split, and DAPO-Math-17k has no test split.

## Example
```yaml
fsx-utils:
  data:
    train: [aime]
    val: [dapo-math-17k]
```
Use instead:
```yaml
fsx-utils:
  data:
    train: [dapo-math-17k]
    val: [aime]
```

## Fix
Name a source with the needed split (`grpo-data datasets` lists them).
"""


def check(ctx) -> Iterator[Hit]:
    if not ctx.has_values or not ctx.component_enabled("fsxUtils"):
        return
    for role, needs in (("train", ("train",)), ("val", ("test", "valid"))):
        for i, spec in enumerate(ctx.get(f"fsx-utils.data.{role}") or []):
            name = str(spec).rpartition(":")[0] or str(spec)
            adapter = REGISTRY.get(name)
            if adapter is None:
                continue  # the schema rejects unknown names
            key = f"fsx-utils.data.{role}.{i}"
            if not any(s in adapter.splits for s in needs):
                yield Hit(key, f"{name} has no {' or '.join(needs)} split (has: {', '.join(adapter.splits)}); "
                          f"grpo-data {'prepare' if role == 'train' else 'holdout'} would exit 2",
                          remediation="use a source that has that split (grpo-data datasets lists them)")
