"""Each attempt's logs on the run's own storage, so they outlive the pod (and the cluster) that ran it.

    <checkpointDir>/grpo-stack/logs/<job_id>/driver.log    the Ray job's log (the driver's output), as streamed
    <checkpointDir>/grpo-stack/logs/<job_id>/steps.jsonl   verl's own `file` tracker output (one JSON a step)

beside `attempts.jsonl` (records.py), whose records name the same job ids. The supervised submit writes them
(grpo_stack.job.supervised); `logs` commands read them with `read_log` / `job_ids`, inside or outside the cluster.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import BinaryIO

from .records import DIRNAME

LOGS = "logs"
DRIVER_LOG = "driver.log"
STEPS_FILE = "steps.jsonl"


def logs_dir(checkpoint_dir: str | Path) -> Path:
    return Path(checkpoint_dir) / DIRNAME / LOGS


def log_path(checkpoint_dir: str | Path, job_id: str) -> Path:
    """Where the driver's log of Ray job `job_id` lies on the run's storage."""
    _check_id(job_id)
    return logs_dir(checkpoint_dir) / job_id / DRIVER_LOG


def steps_path(checkpoint_dir: str | Path, job_id: str) -> Path:
    """Where verl's `file` tracker writes the steps of Ray job `job_id` (its VERL_FILE_LOGGER_PATH)."""
    _check_id(job_id)
    return logs_dir(checkpoint_dir) / job_id / STEPS_FILE


def read_log(checkpoint_dir: str | Path, job_id: str) -> str:
    """The stored driver log of `job_id`; FileNotFoundError when none was written."""
    return log_path(checkpoint_dir, job_id).read_text(encoding="utf-8", errors="replace")


def job_ids(checkpoint_dir: str | Path) -> list[str]:
    """The job ids with a stored driver log, oldest first (by the log's creation: its directory's mtime can move)."""
    root = logs_dir(checkpoint_dir)
    if not root.is_dir():
        return []
    found = [(p.parent.stat().st_ctime, p.parent.name) for p in root.glob(f"*/{DRIVER_LOG}")]
    return [name for _, name in sorted(found)]


class LogWriter:
    """Appends streamed chunks to one job's driver.log, flushed after each chunk (a killed submit loses at most
    the chunk it was writing). A storage error is reported once and the stream goes on without the copy."""

    def __init__(self, checkpoint_dir: str | Path, job_id: str, report=print):
        self.path = log_path(checkpoint_dir, job_id)
        self.report = report
        self._fh: BinaryIO | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = open(self.path, "ab")
        except OSError as exc:
            self._fail(exc)

    def write(self, chunk: str) -> None:
        if self._fh is None:
            return
        try:
            self._fh.write(chunk.encode("utf-8", errors="replace"))
            self._fh.flush()
        except OSError as exc:
            self._fail(exc)

    def close(self) -> None:
        if self._fh is not None:
            try:
                self._fh.flush()
                os.fsync(self._fh.fileno())
                self._fh.close()
            except OSError as exc:
                self._fail(exc)
            self._fh = None

    def _fail(self, exc: OSError) -> None:
        self.report(f"log store: cannot write {self.path} ({exc.strerror or exc}); the log stays in Ray only")
        if self._fh is not None:
            try:
                self._fh.close()
            except OSError:
                pass
        self._fh = None


def _check_id(job_id: str) -> None:
    if not job_id or "/" in job_id or job_id in (".", ".."):
        raise ValueError(f"not a Ray job id: {job_id!r}")
