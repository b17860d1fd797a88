"""The worker pool: killable processes, a hard per-item timeout, and a bounded hand-off to the workers.

pebble kills and replaces only the worker whose task ran past its timeout; the tasks on sibling workers finish
normally. At most SLOTS_PER_WORKER tasks per worker are handed to pebble, so queueing happens here, where it can be
measured and bounded by a deadline, instead of inside pebble.
"""

from __future__ import annotations

import asyncio
import multiprocessing
from concurrent.futures import TimeoutError as FutureTimeout

import pebble

from reward_service import scoring
from reward_service.metrics import Metrics

# One task running and one next in line per worker: a worker then never idles while its last result travels back
# through the event loop (measured: ~15 % of worker time on 2 cores). pebble starts a task's hard timeout only
# when a worker picks it up, so waiting in line costs no timeout budget.
SLOTS_PER_WORKER = 2


class ScorerFault(Exception):
    """The scorer raised, or the pool cannot run tasks: a service fault, never a reward."""


class QueueDeadline(Exception):
    """No worker became free before the request's deadline."""


class WorkerPool:
    def __init__(self, workers: int, parse_timeout_s: int, hard_timeout_s: float, memory_mb: int, metrics: Metrics):
        self.workers = workers
        self.hard_timeout_s = hard_timeout_s
        self._init_args = (parse_timeout_s, memory_mb)
        self._metrics = metrics
        self._slots = asyncio.Semaphore(workers * SLOTS_PER_WORKER)
        self._pool: pebble.ProcessPool | None = None

    async def start(self) -> None:
        # forkserver: workers are forked from a clean single-threaded server with math-verify already imported,
        # not from this multi-threaded process, and a replacement costs ~0.1-0.2 s.
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["reward_service.scoring"])
        self._pool = pebble.ProcessPool(
            max_workers=self.workers, initializer=scoring.init_worker, initargs=self._init_args, context=context
        )
        # Start every worker now, so the first requests do not pay for the imports.
        await asyncio.gather(*(self.run_direct(*scoring.CANARY) for _ in range(self.workers)))

    async def close(self) -> None:
        if self._pool is not None:
            self._pool.stop()
            await asyncio.to_thread(self._pool.join)
            self._pool = None

    async def score(self, golds: tuple[str, ...], response: str, fault: str | None, deadline: float) -> dict:
        """Wait for a slot until `deadline` (loop time), then score with the hard timeout."""
        self._metrics.queue_depth.inc()
        try:
            async with asyncio.timeout_at(deadline):
                await self._slots.acquire()
        except TimeoutError:
            raise QueueDeadline from None
        finally:
            self._metrics.queue_depth.dec()
        self._metrics.running.inc()
        try:
            return await self.run_direct(golds, response, fault)
        finally:
            self._metrics.running.dec()
            self._slots.release()

    async def run_direct(self, golds: tuple[str, ...], response: str, fault: str | None = None) -> dict:
        """Run one task without taking a slot (start-up warm-up and the readiness canary)."""
        if self._pool is None or not self._pool.active:
            raise ScorerFault("the worker pool is not running")
        try:
            future = self._pool.schedule(scoring.score, args=(golds, response, fault), timeout=self.hard_timeout_s)
        except RuntimeError as error:
            raise ScorerFault(f"the worker pool refused the task: {error}") from error
        try:
            return await asyncio.wrap_future(future)
        except FutureTimeout:
            self._metrics.pool_restarts.labels("hard_timeout").inc()
            return {"reward": 0.0, "status": "hard_timeout",
                    "detail": f"scoring ran past {self.hard_timeout_s:g} s; the worker was killed and replaced"}
        except pebble.ProcessExpired as died:
            self._metrics.pool_restarts.labels("worker_died").inc()
            return {"reward": 0.0, "status": "worker_died", "detail": _death_detail(died.exitcode)}
        except Exception as error:
            raise ScorerFault(f"the scorer raised {type(error).__name__}: {error}") from error


def _death_detail(exitcode: int | None) -> str:
    if exitcode == scoring.EXIT_OUT_OF_MEMORY:
        return "the worker hit its memory limit and was replaced"
    if exitcode is not None and exitcode < 0:
        return f"the worker was killed by signal {-exitcode} and replaced"
    return f"the worker exited with code {exitcode} and was replaced"
