"""verl's step records, as its `file` tracker writes them (verl/utils/tracking.py FileLogger: `{"step": N, "data":
{metric: value}}` a line, written unbuffered to VERL_FILE_LOGGER_PATH), read into what the exporter serves.

Only verl's own metric names are read (verl/trainer/ppo/metric_utils.py): `timing_s/<phase>` (compute_timing_metrics,
the names of verl's `marked_timer` blocks: gen, reward, old_log_prob, ref, adv, update_actor, update_weights,
save_checkpoint, testing, ...; `step` is the whole step), `critic/score/mean` (the reward function's score before
any KL penalty), `response_length/mean`, `perf/total_num_tokens` and `perf/time_per_step`. verl logs no spread of
the training reward (only min and max), so none is served.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

TIMING = "timing_s/"


@dataclass(frozen=True)
class StepRecord:
    step: int
    seconds: float | None  # timing_s/step: the step's own time, checkpoint included, validation not
    phases: dict[str, float] = field(default_factory=dict)  # phase -> seconds (timing_s/<phase>, step left out)
    reward_mean: float | None = None
    response_length_mean: float | None = None
    tokens_per_second: float | None = None


def parse(line: str | bytes) -> StepRecord | None:
    """The training step one line records; None for a validation-only record (verl logs the validation it runs
    before training at the step it starts from), or a line that is not a whole record."""
    try:
        record = json.loads(line)
    except ValueError:
        return None
    if not isinstance(record, dict) or not isinstance(record.get("data"), dict):
        return None
    data = record["data"]
    if "training/global_step" not in data or not isinstance(record.get("step"), int):
        return None
    phases = {k[len(TIMING):]: v for k, v in data.items()
              if k.startswith(TIMING) and k != TIMING + "step" and _number(v) is not None}
    tokens, per_step = _number(data.get("perf/total_num_tokens")), _number(data.get("perf/time_per_step"))
    return StepRecord(step=record["step"], seconds=_number(data.get(TIMING + "step")), phases=phases,
                      reward_mean=_number(data.get("critic/score/mean")),
                      response_length_mean=_number(data.get("response_length/mean")),
                      tokens_per_second=tokens / per_step if tokens is not None and per_step else None)


def _number(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


class StepFile:
    """Follows one step file from its start: `new()` returns the records appended since the last call. verl opens
    the file with "wb" at start-up, so a file that shrank was started over: read again from its start."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.offset = 0
        self.pending = b""

    def new(self) -> list[StepRecord]:
        try:
            size = os.stat(self.path).st_size
        except OSError:
            return []
        if size < self.offset:
            self.offset, self.pending = 0, b""
        if size == self.offset:
            return []
        with open(self.path, "rb") as fh:
            fh.seek(self.offset)
            chunk = fh.read(size - self.offset)
        self.offset += len(chunk)
        lines = (self.pending + chunk).split(b"\n")
        self.pending = lines.pop()  # a line verl is still writing
        return [r for r in map(parse, lines) if r is not None]
