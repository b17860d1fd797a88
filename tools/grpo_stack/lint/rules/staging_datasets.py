"""GRPO560 staging-datasets."""

from __future__ import annotations

from collections.abc import Iterator

from ...data.adapters import REGISTRY
from ..finding import Hit, Severity

CODE = "GRPO560"
NAME = "staging-datasets"
SEVERITY = Severity.ERROR
SUMMARY = "A dataset in `fsx-utils.data` would make the grpo-data command NOTES prints fail."
DOC = """## What it does
Checks the datasets that `fsx-utils.data` names for the `grpo-data prepare` and `grpo-data holdout` commands
printed by NOTES step 2, against grpo-data's adapter registry:
- every `train` source has a `train` split;
- every `val` source has a `test` or `valid` split;
- every source whose pinned revision is a branch (APPS and TACO are read from `refs/convert/parquet`) has a
  commit in `fsx-utils.data.revisions`.

## Why is this bad?
Each of these makes the printed command exit 2 on the cluster, after the install: AIME 2024 is an evaluation
set with no training split, DAPO-Math-17k has no test split, and a branch moves under a run (grpo-data refuses
to read one unless told it is mutable). Data prepared from a moving branch cannot be reproduced.

## Example
```yaml
fsx-utils:
  data:
    train: [apps]
    val: [aime]
    revisions: {}
```
Use instead:
```yaml
fsx-utils:
  data:
    train: [apps]
    val: [aime]
    revisions:
      apps: 0123456789abcdef0123456789abcdef01234567
```

## Fix
Name a source with the needed split (`grpo-data datasets` lists them), and pin each branch-pinned source's
commit in `fsx-utils.data.revisions`.
"""


def check(ctx) -> Iterator[Hit]:
    if not ctx.has_values or not ctx.component_enabled("fsxUtils"):
        return
    revisions = ctx.get("fsx-utils.data.revisions") or {}
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
            if not adapter.pinned and not revisions.get(name):
                yield Hit(key, f"{name} is read from the branch {adapter.revision}; without "
                          f"fsx-utils.data.revisions.{name} grpo-data refuses it (exit 2)",
                          remediation=f"set fsx-utils.data.revisions.{name} to the branch's current commit")
