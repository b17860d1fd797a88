"""GRPO562 data-layout."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import PurePosixPath

from ...data.example import layout_for, possessive, suffix_for
from ..finding import Hit, Severity

CODE = "GRPO562"
NAME = "data-layout"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "A data file's suffix gives the other framework's row layout: the run reads none of its labels."
DOC = """## What it does
Checks every file in `global.job.data.trainFiles` and `valFiles` against the run's framework. grpo-data writes
verl's row layout to a `.parquet` file and miles' to a `.jsonl` file, and both frameworks read both formats, so
the suffix alone decides whose rows the file holds. An error where the NOTES staging command writes the file (the
first file of each list, with `fsx-utils.data` naming sources): that command, which passes `--framework`, exits 2.
A warning for any other file, whose maker the linter cannot see: it assumes grpo-data wrote it.

## Why is this bad?
miles reads each row's label from `--label-key` (`label`, or `service_label` for the reward service), which a
verl-layout row does not have: every label is `None`, and the reward service refuses every request, after the
GPUs are up. verl reads `reward_model.ground_truth`, which a miles-layout row does not have.

## Example
```yaml
global:
  job:
    framework: miles
    data:
      trainFiles: [data/dapo-math-17k/train.parquet]
```
Use instead:
```yaml
global:
  job:
    framework: miles
    data:
      trainFiles: [data/dapo-math-17k/train.jsonl]
```

## Fix
Name the file with the run's framework's suffix (`.parquet` for verl, `.jsonl` for miles) and write it with
`grpo-data prepare --framework <framework>`.
"""


def check(ctx) -> Iterator[Hit]:
    if not ctx.has_values or ctx.get("global.components.raycluster") is False:
        return  # an evaluation release trains on nothing
    framework = ctx.get("global.job.framework") or "verl"
    staging = ctx.component_enabled("fsxUtils")
    for key, sources in (("trainFiles", "fsx-utils.data.train"), ("valFiles", "fsx-utils.data.val")):
        for i, name in enumerate(ctx.get(f"global.job.data.{key}") or []):
            layout = layout_for(str(name))
            if layout is None or layout == framework:
                continue
            file = PurePosixPath(str(name))
            suffix, right = file.suffix, file.with_suffix(suffix_for(framework))
            fix = f"name it {right} and write it with grpo-data prepare --framework {framework}"
            where = f"global.job.data.{key}.{i}"
            if i == 0 and staging and ctx.get(sources):
                yield Hit(where, f"{name}: the NOTES staging command writes this file with grpo-data --framework "
                          f"{framework}, which refuses a {suffix} output (grpo-data writes "
                          f"{possessive(layout)} layout there, in which {framework} finds no labels) and exits 2",
                          remediation=fix, related=("global.job.framework", sources))
            else:
                yield Hit(where, f"{name}: a {suffix} file made by grpo-data has {possessive(layout)} row layout"
                          f", in which {framework} finds no labels (assumes grpo-data wrote it)",
                          remediation=fix, severity=Severity.WARNING, related=("global.job.framework",))
