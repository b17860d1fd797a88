"""GRPO907 deadline-save."""

from __future__ import annotations

from collections.abc import Iterator

from ...deadline import honoured_by
from ..finding import Hit, Severity

CODE = "GRPO907"
NAME = "deadline-save"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "global.job.deadline is set, but the framework will not save a checkpoint before it."
DOC = """## What it does
When `global.job.deadline` is set, checks that the framework has a way to save before it (grpo_stack.deadline):

- verl with `verl.useV1Trainer: true`: an error. verl 0.9.1's end-time check (`trainer.esi_redundant_time`,
  the end time from `SAGEMAKER_CURRENT_CAPACITY_BLOCK_EXPIRATION_TIMESTAMP`) is in its legacy trainer only
  (`verl/trainer/ppo/ray_trainer.py`); the v1 trainer's fit loop saves at `save_freq` and the last step only;
- verl with `trainer.saveFreq` -1 (never; the schema refuses 0): an error; verl saves at the deadline only when
  `save_freq > 0`;
- miles without `deadline.stepMinutes`: an error; miles takes the request (`--save-trigger-sentinel`) at the end
  of the step in flight, so it must go out one step ahead, and nothing else says how long a step is.

## Why is this bad?
The deadline would pass without a save: the GPUs go away (a Capacity Block ends, the RayJob's
`activeDeadlineSeconds` expires) and every step since the last periodic checkpoint is lost, although the values
asked for a save before it.

## Example
```yaml
global:
  job:
    framework: verl
    deadline: {end: "2026-12-04T11:30:00Z"}
    verl: {useV1Trainer: true}
```
Use instead:
```yaml
global:
  job:
    framework: verl
    deadline: {end: "2026-12-04T11:30:00Z"}
    verl: {useV1Trainer: false}
```

## Fix
verl: run the legacy trainer (`verl.useV1Trainer: false`) with `trainer.saveFreq` above 0, or drop the deadline
and rely on `trainer.saveFreq`. miles: set `global.job.deadline.stepMinutes`.
"""


def check(ctx) -> Iterator[Hit]:
    job = ctx.job_spec.get("job") if getattr(ctx, "job_spec", None) else None
    if not isinstance(job, dict) or not job.get("deadline"):
        return
    for key, why, fix in honoured_by(job):
        yield Hit(key, f"global.job.deadline is set, but {why}", remediation=fix,
                  related=("global.job.deadline",) if key != "global.job.deadline" else ())
