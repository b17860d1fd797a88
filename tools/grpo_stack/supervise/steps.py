"""The training steps an attempt logged, read from the driver's console output.

verl prints one line per step through its console tracker (verl/utils/logger/aggregate_logger.py
concat_dict_to_str: `step:<N> - <metric>:<value> - ...`). miles logs no such line the supervisor could rely on:
for miles the step count comes from the checkpoint tracker alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Ray prefixes a worker's lines with "(pid=..)". A line whose metrics are all validation ones (`val-core/...`,
# `val-aux/...`) is the validation verl runs before training (trainer.val_before_train, default true), logged at the
# step it resumed from (0 fresh): not a training step.
VERL_STEP = re.compile(r"^(?:\([^)]*\)\s+)?step:(\d+)((?: - [^\n]*)?)$", re.M)
# What verl states at start (verl/trainer/ppo/ray_trainer.py _create_dataloader): the dataloader's length times the
# epochs, or trainer.total_training_steps when set. verl 0.9.1's v1 trainer says it through `logging`
# ("INFO:<date> <time>:Total training steps: 4").
VERL_TOTAL = re.compile(r"^(?:\([^)]*\)\s+)?(?:[A-Z]+:.*:)?Total training steps: (\d+)$", re.M)
# Ray colours the "(TaskRunner pid=..)" prefix of an actor's lines in the job's log.
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass(frozen=True)
class LoggedSteps:
    first: int | None
    last: int | None

    @property
    def any(self) -> bool:
        return self.last is not None


def stated_total(text: str, framework: str) -> int | None:
    """The total steps the framework said it will run, from its own start-up line (verl); None when unsaid."""
    found = VERL_TOTAL.findall(ANSI.sub("", text)) if framework == "verl" else []
    return int(found[-1]) if found else None


def logged_steps(text: str, framework: str) -> LoggedSteps:
    if framework != "verl":
        return LoggedSteps(None, None)
    steps = [int(m.group(1)) for m in VERL_STEP.finditer(ANSI.sub("", text)) if not _validation_only(m.group(2))]
    return LoggedSteps(steps[0], steps[-1]) if steps else LoggedSteps(None, None)


def _validation_only(metrics: str) -> bool:
    keys = [part.split(":", 1)[0] for part in metrics.split(" - ")[1:]]
    return bool(keys) and all(k.startswith("val-") for k in keys)
