"""Readiness: a canary score through the pool plus a circuit breaker over recent service faults.

Liveness never looks at any of this: a long scoring queue or a broken scorer must take the pod out of the
Service, not restart it in a loop mid-rollout.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable

from reward_service import scoring
from reward_service.pool import ScorerFault, WorkerPool

# A successful score this recent proves the pool works, so a probe under load does not queue a canary.
PROOF_OF_LIFE_S = 5.0


class FaultWindow:
    """Share of service faults among the last `size` outcomes no older than `max_age_s`.

    Old entries age out, so a pod that was taken out of the Service (and so gets no traffic) can become ready
    again once its canary passes.
    """

    def __init__(self, size: int, max_age_s: float, threshold: float, min_samples: int,
                 clock: Callable[[], float] = time.monotonic):
        self._events: deque[tuple[float, bool]] = deque(maxlen=size)
        self._max_age_s = max_age_s
        self._threshold = threshold
        self._min_samples = min_samples
        self._clock = clock

    def record(self, fault: bool) -> None:
        self._events.append((self._clock(), fault))

    def fault_share(self) -> float | None:
        horizon = self._clock() - self._max_age_s
        while self._events and self._events[0][0] < horizon:
            self._events.popleft()
        if len(self._events) < self._min_samples:
            return None
        return sum(fault for _, fault in self._events) / len(self._events)

    def tripped(self) -> bool:
        share = self.fault_share()
        return share is not None and share > self._threshold


class Readiness:
    def __init__(self, pool: WorkerPool, window: FaultWindow, canary_timeout_s: float,
                 clock: Callable[[], float] = time.monotonic, sandbox=None):
        self._pool = pool
        self._sandbox = sandbox
        self._window = window
        self._canary_timeout_s = canary_timeout_s
        self._clock = clock
        self._last_ok = float("-inf")
        self._canary: asyncio.Task | None = None

    def saw_ok(self) -> None:
        self._last_ok = self._clock()

    async def problems(self) -> list[str]:
        """Reasons the pod should not receive traffic; empty when it is ready."""
        problems = []
        share = self._window.fault_share()
        if self._window.tripped():
            problems.append(f"service faults are {share:.0%} of recent scores")
        canary_problem = await self._check_canary()
        if canary_problem:
            problems.append(canary_problem)
        if self._sandbox is not None and self._sandbox.last_fault:
            # The last code sample failed on the sandbox: unready until the sandbox answers again.
            ping_problem = await self._sandbox.ping()
            if ping_problem:
                problems.append(f"the sandbox is failing: {self._sandbox.last_fault}; {ping_problem}")
        return problems

    async def _check_canary(self) -> str | None:
        if self._clock() - self._last_ok < PROOF_OF_LIFE_S:
            return None
        # Concurrent probes share one canary instead of piling tasks onto the pool.
        if self._canary is None or self._canary.done():
            self._canary = asyncio.ensure_future(self._pool.run_direct(*scoring.CANARY))
            self._canary.add_done_callback(_consume_result)  # a canary that outlives its probe must not warn later
        try:
            result = await asyncio.wait_for(asyncio.shield(self._canary), self._canary_timeout_s)
        except TimeoutError:
            return f"the canary score did not finish within {self._canary_timeout_s:g} s"
        except ScorerFault as fault:
            return f"the canary score failed: {fault}"
        if result.get("status") != "ok":
            return f"the canary score returned {result.get('status')!r}, expected 'ok'"
        self.saw_ok()
        return None


def _consume_result(task: asyncio.Task) -> None:
    if not task.cancelled():
        task.exception()
