"""Every attempt of a run, recorded on the run's storage beside its checkpoints, so it outlives every pod.

One JSON object a line in `<checkpointDir>/grpo-stack/attempts.jsonl` (a directory the frameworks' step-directory
patterns never match). Each line is written with one `write` of at most a few hundred bytes under an exclusive
`flock` and fsynced, so concurrent writers (two supervisors racing after a head restart) interleave whole lines; a
reader skips a torn last line (a writer killed mid-write) instead of failing.
"""

from __future__ import annotations

import fcntl
import json
import os
from dataclasses import asdict, dataclass, fields
from pathlib import Path

DIRNAME = "grpo-stack"
FILENAME = "attempts.jsonl"


@dataclass(frozen=True)
class Attempt:
    attempt: int  # 1, 2, ...
    started: float  # unix time
    ended: float | None
    start_step: int  # the checkpoint step it resumed from (0: fresh)
    last_step: int | None  # the last step it logged
    checkpoint: int | None  # the tracker's step when it ended
    end: str  # how it ended, in the words `status` shows ("exited 0 at step 4 of 4", "driver lost", ...)
    job_id: str = ""


def path(checkpoint_dir: str | Path) -> Path:
    return Path(checkpoint_dir) / DIRNAME / FILENAME


def append(checkpoint_dir: str | Path, attempt: Attempt) -> None:
    target = path(checkpoint_dir)
    target.parent.mkdir(parents=True, exist_ok=True)
    line = (json.dumps(asdict(attempt), sort_keys=True) + "\n").encode()
    fd = os.open(target, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":  # a writer died mid-line: end its line, keep ours whole
            line = b"\n" + line
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)  # closing releases the lock


def read(checkpoint_dir: str | Path) -> list[Attempt]:
    """The recorded attempts, oldest first; lines that are not whole records are skipped."""
    try:
        raw = path(checkpoint_dir).read_bytes()
    except FileNotFoundError:
        return []
    names = {f.name for f in fields(Attempt)}
    out = []
    for line in raw.splitlines():
        try:
            data = json.loads(line)
            if isinstance(data, dict):
                out.append(Attempt(**{k: v for k, v in data.items() if k in names}))
        except (ValueError, TypeError):
            continue
    return out
