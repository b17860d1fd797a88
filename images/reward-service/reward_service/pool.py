"""The worker pool: one supervised process per slot, a hard per-sample timeout, and a bounded hand-off.

Each slot keeps one worker process alive for ever: when its worker dies for any reason (idle or busy, killed from
outside, out of memory, during start-up) the slot starts a replacement. Only the sample the dead worker was
running is answered with `worker_died` (or `hard_timeout` when the pool killed it); a sample queued behind it on
that worker had not started and goes back to the front of the queue. No death ever takes the pool down: that is
what pebble 5.2.3 did when a worker died while idle, failing every later request.

Workers are forked from a forkserver that has math-verify imported, not from this multi-threaded process, so a
replacement costs ~0.1-0.2 s. The server talks to each worker over a socket pair read by the event loop: no
hand-off threads.

The pool depends on the forkserver too, and survives its death or hang in any state: a hand-off that fails (the
forkserver died mid-start: EOFError) is a failed start that is retried, and multiprocessing launches a new
forkserver; a hand-off that does not come back (a stopped forkserver) is abandoned after the start timeout and
the forkserver is killed, which frees the blocked call. Workers are tracked by pid (`pidhandle`), because
multiprocessing can neither kill nor wait for a worker whose forkserver is gone.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import multiprocessing
import multiprocessing.forkserver
import os
import pickle
import signal
import socket
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from reward_service import scoring, worker
from reward_service.metrics import Metrics
from reward_service.pidhandle import PidHandle, become_subreaper

log = logging.getLogger("reward_service")

# One task running and one next in line per worker, so a worker never idles while its last result travels back
# through the event loop. The hard timeout of the second starts only when the first one's result arrives.
SLOTS_PER_WORKER = 2
# A worker started by a forkserver that has not started one yet must say ready within this: that first hand-off
# waits for the new forkserver to import math-verify. Later starts get the pool's (shorter) start timeout.
FIRST_START_TIMEOUT_S = 60.0
# How long to wait for a killed worker to be gone, and then for the forkserver to report its exit code.
EXIT_WAIT_S = 5.0
EXIT_REPORT_WAIT_S = 1.0
# This many failed starts in a row, with no successful one for `broken_after_s`, means the pool cannot be
# repaired: liveness then fails and Kubernetes restarts the pod. Each slot keeps retrying with the backoff below,
# so a pool that recovers (a kill storm ends, memory frees up) passes liveness again.
MAX_START_FAILURES = 5
RESTART_BACKOFF_S = (0.05, 0.2, 0.5, 1.0, 2.0)


class ScorerFault(Exception):
    """The scorer raised, or the pool cannot run tasks: a service fault, never a reward."""


class QueueDeadline(Exception):
    """No worker became free before the request's deadline."""


class _StartFailed(Exception):
    pass


@dataclass(eq=False)
class _Job:
    id: int
    args: tuple
    future: asyncio.Future
    sent: bool = False
    expires_at: float | None = None  # loop time; kept when the job goes back to the queue
    deadline: asyncio.TimerHandle | None = None


@dataclass(eq=False)
class _Worker:
    process: multiprocessing.process.BaseProcess
    handle: PidHandle
    forkserver: int | None  # pid of the forkserver that started it
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    in_flight: deque = field(default_factory=deque)
    timer: asyncio.TimerHandle | None = None
    timed_out: _Job | None = None
    abandoned: _Job | None = None  # its client went away while it ran: the worker was killed to stop it
    has_room: asyncio.Event = field(default_factory=asyncio.Event)

    def kill(self) -> None:
        self.handle.kill()
        self.writer.close()


async def _read_frame(reader: asyncio.StreamReader) -> object:
    (size,) = worker.HEADER.unpack(await reader.readexactly(worker.HEADER.size))
    if size > worker.MAX_FRAME_BYTES:
        raise ConnectionError(f"frame of {size} bytes from a worker")
    return pickle.loads(await reader.readexactly(size))


def _forkserver_pid() -> int | None:
    """The running forkserver's pid (None before the first start). multiprocessing keeps it private."""
    return getattr(multiprocessing.forkserver._forkserver, "_forkserver_pid", None)


def _exited(pid: int) -> bool:
    """Whether our child `pid` has exited, without reaping it (multiprocessing reaps its forkserver itself)."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _kill_forkserver(pid: int | None) -> None:
    # Our own child, not yet reaped (multiprocessing reaps it only when it launches the next one): the pid cannot
    # have been reused.
    if pid is not None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


class WorkerPool:
    def __init__(self, workers: int, parse_timeout_s: int, hard_timeout_s: float, memory_mb: int, metrics: Metrics,
                 break_start_file: str | None = None, broken_after_s: float = 30.0, start_timeout_s: float = 20.0,
                 *, slow_start_file: str | None = None):
        self.workers = workers
        self.hard_timeout_s = hard_timeout_s
        self.start_timeout_s = start_timeout_s
        self._slow_starts = 0  # starts in a row abandoned for not saying ready in time (the next gets longer)
        self._init_args = (parse_timeout_s, memory_mb, break_start_file, slow_start_file)
        self._metrics = metrics
        self._pending: deque[_Job] = deque()
        self._waiters: list[asyncio.Future] = []
        self._ids = itertools.count()
        self._slots: list[asyncio.Task] = []
        self._live: set[_Worker] = set()
        self._start_failures = 0
        self._last_failure = ""
        self._failing_since = 0.0
        self._broken_after_s = broken_after_s
        self._running = False
        self._context = None
        self._proven_forkserver: int | None = None  # the forkserver that last started a worker that said ready
        self._none_alive_since: float | None = None
        # process.start() blocks on the forkserver; its own threads, so a stopped forkserver cannot starve others.
        self._spawner = ThreadPoolExecutor(max_workers=workers + 1, thread_name_prefix="reward-spawn")
        self.broken_reason: str | None = None

    # ------------------------------------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Start every slot and wait until each has a ready worker; raise ScorerFault if the pool is broken."""
        self._context = multiprocessing.get_context("forkserver")
        self._context.set_forkserver_preload(["reward_service.scoring", "reward_service.worker"])
        become_subreaper()
        self._running = True
        self._none_alive_since = time.monotonic()
        started = [asyncio.Event() for _ in range(self.workers)]
        self._slots = [asyncio.create_task(self._run_slot(event)) for event in started]
        while not all(event.is_set() for event in started):
            if self.broken_reason:
                await self.close()
                raise ScorerFault(self.broken_reason)
            await asyncio.sleep(0.05)

    async def close(self) -> None:
        self._running = False
        for slot in self._slots:
            slot.cancel()
        for live in list(self._live):
            live.kill()
        await asyncio.gather(*self._slots, return_exceptions=True)
        self._slots = []
        # At exit multiprocessing joins every worker through the forkserver; a stopped forkserver would never
        # answer and the process would hang instead of exiting. The workers are gone: end it too.
        _kill_forkserver(_forkserver_pid())
        self._spawner.shutdown(wait=False, cancel_futures=True)
        while self._pending:
            job = self._pending.popleft()
            if not job.future.done():
                job.future.set_exception(ScorerFault("the service is shutting down"))

    @property
    def alive(self) -> int:
        return len(self._live)

    def unhealthy(self) -> str | None:
        """Why the pool cannot score and is not recovering (liveness should fail), or None."""
        if self.broken_reason:
            return self.broken_reason
        ended = sum(slot.done() for slot in self._slots)
        if ended:
            return f"{ended} of {self.workers} worker slots have stopped"
        if self._running and self._none_alive_since is not None:
            dead_for = time.monotonic() - self._none_alive_since
            if dead_for >= self._broken_after_s:
                failing = (f"; {self._start_failures} worker starts failed in a row, last: {self._last_failure}"
                           if self._start_failures else "")
                return f"no worker has been alive for {dead_for:.0f} s{failing}"
        return None

    async def _run_slot(self, started: asyncio.Event) -> None:
        # A slot never ends while the pool runs: every error is a failed start or a lost worker, and is retried.
        while self._running:
            try:
                await self._run_worker(started)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("a worker slot failed; restarting it")
                await asyncio.sleep(RESTART_BACKOFF_S[-1])

    async def _run_worker(self, started: asyncio.Event) -> None:
        """Start one worker and serve it until it dies (or retry a failed start after the backoff)."""
        try:
            live = await self._spawn()
        except Exception as error:  # _StartFailed, or anything unforeseen on the start path
            self._start_failed(str(error) if isinstance(error, _StartFailed) else
                               f"starting a worker raised {type(error).__name__}: {error}")
            await asyncio.sleep(RESTART_BACKOFF_S[min(self._start_failures, len(RESTART_BACKOFF_S)) - 1])
            return
        self._start_failures = 0
        self._slow_starts = 0
        self.broken_reason = None
        self._proven_forkserver = live.forkserver
        started.set()
        self._set_live(live, True)
        exitcode = None
        try:
            exitcode = await self._serve(live)
        except asyncio.CancelledError:
            _abandon(live)
            raise
        finally:
            self._set_live(live, False)
            live.kill()
            if not self._running:
                live.handle.close()
        try:
            self._retire(live, exitcode)
        finally:
            live.handle.close()

    def _set_live(self, live: _Worker, alive: bool) -> None:
        if alive:
            self._live.add(live)
            self._none_alive_since = None
        else:
            self._live.discard(live)
            if not self._live and self._none_alive_since is None:
                self._none_alive_since = time.monotonic()
        self._metrics.workers_alive.set(len(self._live))

    def _start_failed(self, reason: str) -> None:
        now = time.monotonic()
        if self._start_failures == 0:
            self._failing_since = now
        self._start_failures += 1
        self._last_failure = reason
        self._metrics.pool_restarts.labels("start_failed").inc()
        log.warning("worker failed to start", extra={"detail": reason, "failures_in_a_row": self._start_failures})
        failing_for = now - self._failing_since
        if self._start_failures >= MAX_START_FAILURES and failing_for >= self._broken_after_s:
            self.broken_reason = (f"{self._start_failures} worker starts failed in a row over {failing_for:.0f} s; "
                                  f"last: {reason}")

    def _start_timeout(self) -> float:
        """The pool's start timeout, doubled for every start in a row abandoned for slowness, up to the first
        start's: on a node too loaded to start a worker within it, the same deadline would kill every start for
        ever; a longer one lets the pool converge, and a stopped worker is still killed, only later."""
        return min(FIRST_START_TIMEOUT_S, self.start_timeout_s * 2 ** min(self._slow_starts, 16))

    async def _spawn(self) -> _Worker:
        forkserver = _forkserver_pid()
        proven = forkserver is not None and forkserver == self._proven_forkserver and not _exited(forkserver)
        timeout_s = self._start_timeout() if proven else FIRST_START_TIMEOUT_S
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        ours, theirs = socket.socketpair()
        process = self._context.Process(target=worker.main, args=(theirs, *self._init_args), daemon=True)
        try:
            await self._hand_off(process, timeout_s)
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        handle = PidHandle(process.pid)
        try:
            reader, writer = await asyncio.open_connection(sock=ours)
        except BaseException:
            ours.close()
            handle.kill()
            handle.close()
            raise
        live = _Worker(process, handle, _forkserver_pid(), reader, writer)
        live.has_room.set()
        try:
            async with asyncio.timeout_at(deadline):
                kind, _pid = await _read_frame(reader)
            if kind != worker.READY:
                raise ConnectionError(f"unexpected first frame {kind!r}")
        except (asyncio.IncompleteReadError, ConnectionError, OSError, TimeoutError, pickle.UnpicklingError,
                ValueError) as error:
            live.kill()
            exitcode = await self._exitcode(live)
            live.handle.close()
            if isinstance(error, TimeoutError):
                self._slow_starts += 1
            what = (f"did not say ready within {timeout_s:g} s" if isinstance(error, TimeoutError) else
                    f"exited with {_exit_text(exitcode)} during start-up ({type(error).__name__})")
            raise _StartFailed(f"the worker {what}") from None
        except BaseException:  # cancelled by close(): the half-started worker must not outlive the pool
            live.kill()
            live.handle.close()
            raise
        return live

    async def _hand_off(self, process, timeout_s: float) -> None:
        """process.start(): a blocking hand-off to the forkserver (milliseconds; a new forkserver first imports
        math-verify). Any error is a failed start; a forkserver that does not answer is killed."""
        forkserver = _forkserver_pid()
        started = asyncio.get_running_loop().run_in_executor(self._spawner, process.start)
        try:
            await asyncio.wait_for(asyncio.shield(started), timeout_s)
        except TimeoutError:
            # Stopped or hung: killing it ends the blocked call (EOFError) and the next start launches a new one.
            _kill_forkserver(_forkserver_pid() or forkserver)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(started, EXIT_WAIT_S)
            raise _StartFailed(f"the forkserver did not start a worker within {timeout_s:g} s; "
                               f"it was killed and will be replaced") from None
        except asyncio.CancelledError:
            raise
        except Exception as error:  # EOFError when the forkserver dies mid-start, OSError, ...
            raise _StartFailed(f"the forkserver could not start a worker: {type(error).__name__}: {error}") from None

    async def _exitcode(self, live: _Worker) -> int | None:
        """The exit code of a worker that was just killed, or None when nobody can tell any more."""
        if not await live.handle.wait(EXIT_WAIT_S):
            log.error("a killed worker did not exit", extra={"pid": live.handle.pid})
            return None
        if live.handle.exitcode is not None:  # adopted after its forkserver died, and reaped here
            return live.handle.exitcode
        loop = asyncio.get_running_loop()
        deadline = loop.time() + EXIT_REPORT_WAIT_S
        while live.process.exitcode is None and loop.time() < deadline:
            await asyncio.sleep(0.02)  # the forkserver reaps it and reports the code through the sentinel
        exitcode = live.process.exitcode
        if exitcode == 255 and (live.forkserver is None or live.forkserver != _forkserver_pid()
                                or _exited(live.forkserver)):
            return None  # 255 is what multiprocessing reads once the forkserver that started it is gone
        return exitcode

    # ---------------------------------------------------------------------------------------------- the worker

    async def _serve(self, live: _Worker) -> int | None:
        """Feed and read one worker until it dies; return its exit code."""
        feeder = asyncio.create_task(self._feed(live))
        try:
            await self._read(live)
        finally:
            feeder.cancel()
            await asyncio.gather(feeder, return_exceptions=True)
            self._disarm(live)
        live.kill()
        return await self._exitcode(live)

    async def _feed(self, live: _Worker) -> None:
        try:
            while True:
                await live.has_room.wait()
                job = await self._next_job(live)
                job.sent = True
                if job.deadline:
                    job.deadline.cancel()
                live.in_flight.append(job)
                self._metrics.running.inc()
                self._metrics.queue_depth.set(len(self._pending))
                if len(live.in_flight) == 1:
                    self._arm(live)
                if len(live.in_flight) >= SLOTS_PER_WORKER:
                    live.has_room.clear()
                self._wake()  # this worker is busy now: the others may take a second sample
                live.writer.write(worker.encode((job.id, *job.args)))
                await live.writer.drain()
        except (ConnectionError, OSError):
            live.kill()  # the reader sees the end and the slot replaces the worker

    async def _read(self, live: _Worker) -> None:
        while True:
            try:
                job_id, kind, payload = await _read_frame(live.reader)
            except (asyncio.IncompleteReadError, ConnectionError, OSError, pickle.UnpicklingError, ValueError):
                return
            if not live.in_flight or live.in_flight[0].id != job_id:
                log.error("worker answered out of order; replacing it", extra={"job": job_id})
                return
            job = live.in_flight.popleft()
            self._metrics.running.dec()
            self._disarm(live)
            if live.in_flight:
                if live.in_flight[0].future.done():
                    # The next task's client went away after it was handed over: stop it before it is scored.
                    live.abandoned = live.in_flight[0]
                    if not job.future.done():
                        _answer(job, kind, payload)
                    return
                self._arm(live)
            live.has_room.set()
            if self._pending:
                self._wake()
            if not job.future.done():
                _answer(job, kind, payload)

    def _arm(self, live: _Worker) -> None:
        live.timer = asyncio.get_running_loop().call_later(self.hard_timeout_s, self._hard_timeout, live)

    def _disarm(self, live: _Worker) -> None:
        if live.timer:
            live.timer.cancel()
            live.timer = None

    def _hard_timeout(self, live: _Worker) -> None:
        live.timer = None
        if live.in_flight:
            live.timed_out = live.in_flight[0]
            live.kill()

    def _retire(self, live: _Worker, exitcode: int | None) -> None:
        """Answer the sample the dead worker was running; requeue the ones that had not started."""
        head = live.in_flight.popleft() if live.in_flight else None
        self._metrics.running.dec(len(live.in_flight) + (head is not None))
        for job in reversed(live.in_flight):
            self._requeue(job)
        live.in_flight.clear()
        self._wake()
        if head is not None and head is live.abandoned:
            self._metrics.pool_restarts.labels("abandoned").inc()
            log.info("a sample's client went away while it was scored; its worker was stopped and replaced")
            return
        if head is not None and head is live.timed_out:
            self._metrics.pool_restarts.labels("hard_timeout").inc()
            result = {"reward": 0.0, "status": "hard_timeout",
                      "detail": f"scoring ran past {self.hard_timeout_s:g} s; the worker was killed and replaced"}
        else:
            self._metrics.pool_restarts.labels("worker_died").inc()
            log.warning("worker died; replacing it", extra={
                "detail": _death_detail(exitcode), "held_sample": head is not None})
            result = {"reward": 0.0, "status": "worker_died", "detail": _death_detail(exitcode)}
        if head is not None and not head.future.done():
            head.future.set_result(result)

    # ---------------------------------------------------------------------------------------------- the queue

    async def _next_job(self, live: _Worker) -> _Job:
        while True:
            # A busy worker takes a second sample only when no other worker is idle.
            while self._pending and (not live.in_flight or not self._idle_worker_besides(live)):
                job = self._pending.popleft()
                if not job.future.done():
                    return job
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            finally:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)

    def _idle_worker_besides(self, live: _Worker) -> bool:
        return any(not other.in_flight for other in self._live if other is not live)

    def _wake(self) -> None:
        # Wake every idle feeder (at most one per worker): one that was cancelled meanwhile cannot strand a job.
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def _submit(self, args: tuple, front: bool = False) -> _Job:
        if not self._running:
            raise ScorerFault("the worker pool is not running")
        job = _Job(next(self._ids), args, asyncio.get_running_loop().create_future())
        if front:
            self._pending.appendleft(job)
        else:
            self._pending.append(job)
        self._metrics.queue_depth.set(len(self._pending))
        self._wake()
        return job

    def _requeue(self, job: _Job) -> None:
        """Back to the front of the queue, under the deadline it was admitted with."""
        job.sent = False
        if job.future.done():
            return
        if job.expires_at is not None:
            loop = asyncio.get_running_loop()
            if loop.time() >= job.expires_at:
                job.future.set_exception(QueueDeadline())
                return
            job.deadline = loop.call_at(job.expires_at, self._expire, job)
        self._pending.appendleft(job)
        self._metrics.queue_depth.set(len(self._pending))

    def _expire(self, job: _Job) -> None:
        if not job.sent and not job.future.done():
            try:
                self._pending.remove(job)
            except ValueError:
                pass
            self._metrics.queue_depth.set(len(self._pending))
            job.future.set_exception(QueueDeadline())

    async def score(self, golds: tuple[str, ...], response: str, fault: str | None, deadline: float) -> dict:
        """Queue until a worker is free or `deadline` (loop time) passes, then score with the hard timeout.

        A caller that is cancelled (its client went away) takes its sample out: a queued one is skipped, a running
        one is stopped by killing its worker, which the slot replaces."""
        loop = asyncio.get_running_loop()
        job = self._submit((golds, response, fault))
        job.expires_at = deadline
        job.deadline = loop.call_at(deadline, self._expire, job)
        try:
            return await job.future
        except asyncio.CancelledError:
            job.deadline.cancel()
            if job.sent:
                self._stop(job)
            raise

    def _stop(self, job: _Job) -> None:
        """Kill the worker running an abandoned job; one queued behind another on a worker is stopped when it
        reaches the head (_read)."""
        for live in self._live:
            if live.in_flight and live.in_flight[0] is job:
                live.abandoned = job
                live.kill()
                return

    async def run_direct(self, golds: tuple[str, ...], response: str, fault: str | None = None) -> dict:
        """Run one task ahead of the queue (the readiness canary): it waits for at most one running sample."""
        return await self._submit((golds, response, fault), front=True).future


def _answer(job: _Job, kind: str, payload: object) -> None:
    if kind == worker.RESULT:
        job.future.set_result(payload)
    else:
        job.future.set_exception(ScorerFault(f"the scorer raised {payload}"))


def _abandon(live: _Worker) -> None:
    for job in live.in_flight:
        if not job.future.done():
            job.future.set_exception(ScorerFault("the service is shutting down"))
    live.in_flight.clear()


def _exit_text(exitcode: int | None) -> str:
    if exitcode is None:
        return "an unknown status"
    if exitcode < 0:
        return f"signal {-exitcode}"
    return f"code {exitcode}"


def _death_detail(exitcode: int | None) -> str:
    if exitcode is None:
        return "the worker died (its exit status was lost with its forkserver) and was replaced"
    if exitcode == scoring.EXIT_OUT_OF_MEMORY:
        return "the worker hit its memory limit and was replaced"
    if exitcode is not None and exitcode < 0:
        return f"the worker was killed by signal {-exitcode} and replaced"
    return f"the worker exited with code {exitcode} and was replaced"
