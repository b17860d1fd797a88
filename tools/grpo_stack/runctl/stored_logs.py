"""The driver logs kept on the run's storage: `<checkpointDir>/grpo-stack/logs/<job_id>/driver.log`.

A reader of that layout only (the writer stores each attempt's log there); it names its functions as the writer's
module does (`log_path`, `read_log`, `job_ids`) so one can replace the other.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..supervise.records import DIRNAME

LOGS = "logs"
DRIVER_LOG = "driver.log"
# A Ray submission id as the submit makes them (job/rayjobs.py): nothing that could leave the logs directory.
JOB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,200}$")


def log_path(checkpoint_dir: str | Path, job_id: str) -> Path:
    if not JOB_ID.match(job_id):
        raise ValueError(f"{job_id!r} is not a Ray job id")
    return Path(checkpoint_dir) / DIRNAME / LOGS / job_id / DRIVER_LOG


def read_log(checkpoint_dir: str | Path, job_id: str) -> str | None:
    """The stored log, None when there is none."""
    try:
        return log_path(checkpoint_dir, job_id).read_text(errors="replace")
    except FileNotFoundError:
        return None


def job_ids(checkpoint_dir: str | Path) -> list[str]:
    """Every job with a stored log, oldest first (by the log's modification time)."""
    root = Path(checkpoint_dir) / DIRNAME / LOGS
    try:
        found = [p for p in root.iterdir() if (p / DRIVER_LOG).is_file() and JOB_ID.match(p.name)]
    except FileNotFoundError:
        return []
    return [p.name for p in sorted(found, key=lambda p: ((p / DRIVER_LOG).stat().st_mtime, p.name))]
