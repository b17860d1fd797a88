"""GRPO610 tracking-secret."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity

CODE = "GRPO610"
NAME = "tracking-secret"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "A wandb / mlflow logger without the tracker credential (global.secrets.tracking) on the Ray pods."
DOC = """## What it does
For `wandb` in `global.job.trainer.logger` the Ray pods need `WANDB_API_KEY`, for `mlflow` `MLFLOW_TRACKING_TOKEN`:
the chart sets the variable named by `global.secrets.tracking.key` from that Secret by secretKeyRef. This rule
reports a tracker logger whose variable no tracking Secret provides.

## Why is this bad?
The predecessor's `tracking` Secret was read by no template: a W&B run could never authenticate and failed
(or logged anonymously) after the GPUs were already up.

## Example
```yaml
global:
  job:
    trainer:
      logger: [console, wandb]
```
Use instead:
```yaml
global:
  secrets:
    tracking: {name: wandb, key: WANDB_API_KEY}
  job:
    trainer:
      logger: [console, wandb]
```

## Fix
Create the Secret (`kubectl create secret generic wandb --from-literal=WANDB_API_KEY=...`) and set
`global.secrets.tracking` to its name and key, or drop the logger.
"""

NEEDS = {"wandb": "WANDB_API_KEY", "mlflow": "MLFLOW_TRACKING_TOKEN"}


def check(ctx) -> Iterator[Hit]:
    if not ctx.has_values:
        return
    loggers = ctx.get("global.job.trainer.logger") or []
    tracking = ctx.get("global.secrets.tracking") or {}
    for logger, variable in NEEDS.items():
        if logger in loggers and tracking.get("key") != variable:
            have = f"the tracking Secret provides {tracking['key']}" if tracking else "global.secrets.tracking is null"
            index = loggers.index(logger)
            yield Hit(f"global.job.trainer.logger.{index}",
                      f"logger {logger} reads {variable} on the Ray pods, but {have}",
                      remediation=f"set global.secrets.tracking: {{name: <secret>, key: {variable}}} in your values "
                      f"file, or drop the {logger} logger",
                      related=("global.secrets.tracking",))
