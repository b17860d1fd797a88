"""A handle on a process by its pid that keeps working when the process's parent (the forkserver) is gone.

multiprocessing learns a worker's fate from the forkserver: once the forkserver dies, every worker it started
reads `exitcode` 255 and `Process.kill()` silently does nothing, so a worker stuck in C code keeps its CPU and
memory for ever. A pidfd (Linux 5.3+) names the process itself: signals sent through it can never reach another
process that reused the pid, and it becomes readable when the process exits. Where pidfds are unavailable the
handle falls back to the pid checked against the process's start time in /proc.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import select
import signal

PR_SET_CHILD_SUBREAPER = 36
_POLL_S = 0.05


def become_subreaper() -> bool:
    """Adopt orphaned descendants (workers whose forkserver died), so they can be reaped and their exit code read.

    In the image the service is PID 1 and adopts orphans anyway; this makes every other launch behave the same.
    """
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _start_time(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            text = stat.read()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    return None if fields[0] in ("Z", "X") else fields[19]  # state, then starttime (field 22 of stat)


def _set_done(future: asyncio.Future) -> None:
    if not future.done():
        future.set_result(None)


class PidHandle:
    def __init__(self, pid: int):
        self.pid = pid
        self._pidfd: int | None = None
        self._started: str | None = None
        self.exitcode: int | None = None
        try:
            self._pidfd = os.pidfd_open(pid)
        except ProcessLookupError:
            self._gone = True
            return
        except (OSError, AttributeError):  # no pidfd support (old kernel, seccomp): the /proc fallback
            self._started = _start_time(pid)
            self._gone = self._started is None
            return
        self._gone = False

    def alive(self) -> bool:
        if self._gone:
            return False
        if self._pidfd is not None:
            readable, _, _ = select.select([self._pidfd], [], [], 0)
            self._gone = bool(readable)
        else:
            self._gone = _start_time(self.pid) != self._started
        return not self._gone

    def kill(self) -> None:
        """SIGKILL the process if it still runs; never another process that reused its pid."""
        if not self.alive():
            return
        with contextlib.suppress(ProcessLookupError, OSError):
            if self._pidfd is not None:
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
            else:
                os.kill(self.pid, signal.SIGKILL)

    async def wait(self, timeout_s: float) -> bool:
        """Wait until the process has exited (a zombie counts); True if it did within `timeout_s`."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while self.alive():
            if loop.time() >= deadline:
                return False
            if self._pidfd is None:
                await asyncio.sleep(_POLL_S)
                continue
            readable = loop.create_future()
            loop.add_reader(self._pidfd, _set_done, readable)
            try:
                await asyncio.wait_for(readable, max(0.0, deadline - loop.time()))
            except TimeoutError:
                pass
            finally:
                loop.remove_reader(self._pidfd)
        self.reap()
        return True

    def reap(self) -> int | None:
        """Collect the exit status when the process was adopted by this one (its forkserver died); else None."""
        if self.exitcode is not None:
            return self.exitcode
        with contextlib.suppress(ChildProcessError, OSError):
            if self._pidfd is not None:  # exactly this process, whatever now holds its pid
                result = os.waitid(os.P_PIDFD, self._pidfd, os.WEXITED | os.WNOHANG)
                if result is not None:
                    self.exitcode = result.si_status if result.si_code == os.CLD_EXITED else -result.si_status
            elif self._started is not None:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
                if pid == self.pid:
                    self.exitcode = os.waitstatus_to_exitcode(status)
        return self.exitcode

    def close(self) -> None:
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None
            self._gone = True
