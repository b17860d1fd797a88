"""global.job.deadline -> the end time, each framework's own save trigger and the grace period (the RayJob's
activeDeadlineSeconds is the chart's, charts/grpo-stack/templates/rayjob.yaml). Stdlib only: the builder and the
in-pod submit import it.

Both frameworks save only at a step boundary, and neither catches SIGTERM (verl 0.9.1 and miles dec268f7 install
no handler for it), so a save before the deadline has to be asked for at least one step, one checkpoint write and
a margin ahead of it; a stop (`ray job stop`) saves nothing.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

# verl 0.9.1 verl/utils/checkpoint/checkpoint_manager.py should_save_ckpt_esi: `int(value)`, unix seconds, read
# from the trainer's environment at every step's check. The legacy trainer checks after the actor update of each
# step (verl/trainer/ppo/ray_trainer.py:1693, the ESI path) and saves when the time left is under
# save_ckpt_duration (VERL_ASSUMED_SAVE_S, never passed by the trainer) + its longest step so far +
# trainer.esi_redundant_time, only when trainer.save_freq > 0; it then keeps training (and saving each step, as the
# time left only shrinks). The v1 trainer (trainer.use_v1, verl/trainer/ppo/v1/trainer_base.py fit) never calls it.
VERL_END_ENV = "SAGEMAKER_CURRENT_CAPACITY_BLOCK_EXPIRATION_TIMESTAMP"
VERL_ASSUMED_SAVE_S = 60
# Ray 2.53.0 (the image's) dashboard/modules/job/job_supervisor.py: `ray job stop` sends SIGTERM to the driver and
# its child processes, waits RAY_JOB_STOP_WAIT_TIME_S (default 3), then SIGKILLs them.
RAY_STOP_WAIT_S = 3
# miles --save-trigger-sentinel (train.py, miles dec268f7): when this file exists at a rollout's save point, miles
# saves that rollout (force_sync), removes the file and keeps training. Relative to trainer.checkpointDir, beside
# the attempt records (grpo_stack.supervise.records), on the shared storage every pod mounts.
MILES_SENTINEL = "grpo-stack/save-now"
# The checkpoint write when the values do not state it: an assumption, stated in every message that uses it.
CHECKPOINT_BYTES_PER_PARAM = 12  # fp32 weights + Adam's two fp32 moments (LoRA runs write far less)
ASSUMED_WRITE_BYTES_PER_S = 1e9  # 1 GB/s to the shared filesystem, all ranks together

RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")


class DeadlineError(ValueError):
    """A deadline that cannot be planned (bad end time, already passed)."""


@dataclass(frozen=True)
class Deadline:
    end: float | None  # unix seconds (global.job.deadline.end)
    hours: float | None  # a budget from the run's start (global.job.deadline.hours)
    margin_s: float  # what the planned save leaves before the deadline
    write_s: float  # one checkpoint write
    write_source: str  # where write_s comes from: the values, or the stated assumption
    step_s: float | None  # the longest step (miles; verl measures its own)

    def end_time(self, started: float) -> float:
        """The deadline in unix seconds for a run whose budget starts at `started`: the earlier of the two."""
        ends = [e for e in (self.end, started + self.hours * 3600 if self.hours else None) if e is not None]
        return min(ends)


def parse_rfc3339(text: str, key: str = "global.job.deadline.end") -> float:
    """An RFC 3339 time with its offset (`2026-12-04T11:30:00Z`) -> unix seconds."""
    if not isinstance(text, str) or not RFC3339.match(text):
        raise DeadlineError(f"{key}: {text!r} is not an RFC 3339 time with an offset, e.g. 2026-12-04T11:30:00Z")
    try:  # fromisoformat reads a `Z` only from Python 3.11
        return datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text).timestamp()
    except ValueError as exc:
        raise DeadlineError(f"{key}: {text!r}: {exc}") from exc


def from_job(job: dict[str, Any], parameters: float | None) -> Deadline | None:
    """The job spec's deadline (None when it has none); `parameters`: the model's, for the write estimate."""
    d = job.get("deadline")
    if not d:
        return None
    end = parse_rfc3339(d["end"]) if d.get("end") is not None else None
    hours = float(d["hours"]) if d.get("hours") is not None else None
    if end is None and hours is None:
        raise DeadlineError("global.job.deadline: set end (an RFC 3339 time), hours (a budget), or both")
    if d.get("checkpointWriteMinutes") is not None:
        write_s, source = float(d["checkpointWriteMinutes"]) * 60, "values: global.job.deadline.checkpointWriteMinutes"
    else:
        write_s, source = estimated_write_seconds(parameters or 0.0)
    step = d.get("stepMinutes")
    return Deadline(end, hours, float(d.get("marginMinutes", 10)) * 60, write_s, source,
                    float(step) * 60 if step is not None else None)


def estimated_write_seconds(parameters: float) -> tuple[float, str]:
    size = parameters * CHECKPOINT_BYTES_PER_PARAM
    return size / ASSUMED_WRITE_BYTES_PER_S, (
        f"assumed: {size / 1e9:.0f} GB ({CHECKPOINT_BYTES_PER_PARAM} bytes per parameter) at "
        f"{ASSUMED_WRITE_BYTES_PER_S / 1e9:.0f} GB/s; set global.job.deadline.checkpointWriteMinutes from a measured "
        "save (verl logs timing_s/save_checkpoint)")


def grace_seconds(step_s: float, write_s: float, margin_s: float) -> float:
    """How long before the deadline a save must be asked for: a request lands mid-step, is taken at that step's
    end (up to one whole step later), then the checkpoint is written, and the margin is left over."""
    return step_s + write_s + margin_s


def verl_redundant_time(deadline: Deadline) -> int:
    """trainer.esi_redundant_time: verl adds its own longest step and an assumed 60 s write, so the margin plus the
    part of the write beyond those 60 s gives the same grace period as grace_seconds (whole seconds, rounded up:
    verl's config default is the integer 0)."""
    return math.ceil(deadline.margin_s + max(0.0, deadline.write_s - VERL_ASSUMED_SAVE_S))


def miles_save_request_at(deadline: Deadline, end: float) -> float:
    """When the supervisor creates miles' sentinel: the grace period before the deadline."""
    if deadline.step_s is None:
        raise DeadlineError("global.job.deadline.stepMinutes: required under framework miles (the sentinel is "
                            "read at the end of the step in flight)")
    return end - grace_seconds(deadline.step_s, deadline.write_s, deadline.margin_s)


def runtime_env(framework: str, use_v1: bool, end: float) -> dict[str, str]:
    """What the Ray job's runtime env carries for the deadline: verl's legacy trainer reads the end time there
    (an integer: verl parses it with int())."""
    if framework == "verl" and not use_v1:
        return {VERL_END_ENV: str(int(end))}
    return {}


def honoured_by(job: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(key, why the framework will not save before the deadline, the fix) for each reason; empty: it will."""
    out = []
    trainer = job.get("trainer") or {}
    if job.get("framework") == "verl":
        if (job.get("verl") or {}).get("useV1Trainer", True):
            out.append(("global.job.verl.useV1Trainer",
                        "verl 0.9.1's v1 trainer (trainer.use_v1) has no deadline save: its fit loop saves at "
                        "save_freq and the last step only (verl/trainer/ppo/v1/trainer_base.py); the end-time check "
                        "is the legacy trainer's (ray_trainer.py, trainer.esi_redundant_time)",
                        "set global.job.verl.useV1Trainer: false (the legacy trainer saves before the deadline), or "
                        "drop global.job.deadline and rely on trainer.saveFreq"))
        if int(trainer.get("saveFreq", 0) or 0) <= 0:
            out.append(("global.job.trainer.saveFreq",
                        f"trainer.saveFreq {trainer.get('saveFreq')}: verl saves at the deadline only when "
                        "trainer.save_freq > 0", "set global.job.trainer.saveFreq to a positive interval"))
    elif job.get("framework") == "miles" and (job.get("deadline") or {}).get("stepMinutes") is None:
        out.append(("global.job.deadline",
                    "miles takes a save request at the end of the step in flight, so the request must go out one "
                    "step ahead: without stepMinutes there is no telling when",
                    "set global.job.deadline.stepMinutes to the longest step you expect (miles logs each "
                    "rollout's time)"))
    return out
