"""The training steps an attempt logged, read from the driver's console output.

verl prints one line per step through its console tracker (verl/utils/logger/aggregate_logger.py
concat_dict_to_str: `step:<N> - <metric>:<value> - ...`). miles logs no such line the supervisor could rely on:
for miles the step count comes from the checkpoint tracker alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

VERL_STEP = re.compile(r"^(?:\([^)]*\)\s+)?step:(\d+)(?: - |$)", re.M)  # Ray prefixes a worker's lines with "(pid=..)"


@dataclass(frozen=True)
class LoggedSteps:
    first: int | None
    last: int | None

    @property
    def any(self) -> bool:
        return self.last is not None


def logged_steps(text: str, framework: str) -> LoggedSteps:
    if framework != "verl":
        return LoggedSteps(None, None)
    steps = [int(m.group(1)) for m in VERL_STEP.finditer(text)]
    return LoggedSteps(steps[0], steps[-1]) if steps else LoggedSteps(None, None)
