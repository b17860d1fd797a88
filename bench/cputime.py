"""One command timed the way the benches compare tools: wall seconds and CPU seconds (user + system of the command
and everything it waited for, from the children's rusage), so a tool that works in threads or subprocesses is
charged for all of it."""

from __future__ import annotations

import resource
import subprocess
import time


def run_timed(cmd: list[str], env: dict | None = None) -> tuple[float, float, subprocess.CompletedProcess]:
    """(wall, cpu, the finished process with its output as text)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), proc
