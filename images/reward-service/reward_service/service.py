"""Scoring requests end to end: admission, deadline, the pool, and what gets counted and logged.

Outcomes decided by the input come back as a reward with an explicit status. Service faults raise ServiceFault,
which the app turns into a 5xx: a broken scorer must never look like a wrong answer.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from reward_service import codescore, routing
from reward_service.config import Settings
from reward_service.custom import CUSTOM_SCORERS
from reward_service.health import FaultWindow, Readiness
from reward_service.metrics import Metrics
from reward_service.pool import QueueDeadline, ScorerFault, WorkerPool
from reward_service.samples import build_sample, sample_hash
from reward_service.sandbox import SandboxClient, SandboxFault

log = logging.getLogger("reward_service")

# Statuses that count against readiness: the scorer raised, or workers keep dying under us.
WINDOW_FAULTS = frozenset({"error", "worker_died", "sandbox_unavailable"})
# Statuses worth one log line each; ok/wrong/no_answer/no_label are only counted.
LOGGED_STATUSES = {"screened": logging.INFO, "timeout": logging.WARNING, "hard_timeout": logging.WARNING,
                   "worker_died": logging.WARNING,
                   "overloaded": logging.WARNING, "error": logging.ERROR, "sandbox_unavailable": logging.ERROR,
                   "unknown_source": logging.WARNING, "bad_input": logging.WARNING, "bad_label": logging.WARNING}


class ServiceFault(Exception):
    def __init__(self, http_status: int, status: str, detail: str):
        super().__init__(detail)
        self.http_status = http_status
        self.status = status
        self.detail = detail


@dataclass
class RawSample:
    prompt: Any = None
    response: Any = None
    label: Any = None
    metadata: Any = None
    data_source: Any = None


class RewardService:
    def __init__(self, settings: Settings, metrics: Metrics):
        self.settings = settings
        self.metrics = metrics
        self.pool = WorkerPool(settings.workers, settings.parse_timeout_s, settings.hard_timeout_s,
                               settings.worker_memory_mb, metrics, settings.test_break_start_file,
                               settings.broken_after_s, settings.start_timeout_s,
                               slow_start_file=settings.test_slow_start_file)
        self.window = FaultWindow(settings.fault_window, settings.fault_window_s, settings.fault_threshold,
                                  settings.fault_min_samples)
        self.router = routing.Router(settings.routes)
        self.sandbox = None
        if settings.sandbox_url:
            self.sandbox = SandboxClient(settings.sandbox_url, settings.sandbox_concurrency, settings.sandbox_retries,
                                         settings.sandbox_run_timeout_s, settings.sandbox_memory_mb, metrics)
        self.readiness = Readiness(self.pool, self.window, settings.canary_timeout_s, sandbox=self.sandbox)
        self._in_flight = 0

    async def score_many(self, samples: list[RawSample], arrived: float | None = None) -> list[dict]:
        """Score samples concurrently; any service fault fails the whole call (5xx), never a silent 0.0.

        `arrived` (loop time) is when the request's headers arrived: every sample is answered within
        REWARD_DEADLINE_S of it, queueing and sandbox waits included. A caller cancelled because its client went
        away takes its samples' work with it (counted in reward_abandoned_total)."""
        loop = asyncio.get_running_loop()
        arrived = loop.time() if arrived is None else arrived
        if self._in_flight + len(samples) > self.settings.max_in_flight:
            self.metrics.count_score("overloaded", len(samples))
            detail = f"{self._in_flight} samples in flight; the limit is {self.settings.max_in_flight}"
            log.warning("scoring fault", extra={"status": "overloaded", "detail": detail, "samples": len(samples),
                                                "elapsed_ms": round((loop.time() - arrived) * 1000, 1)})
            raise ServiceFault(503, "overloaded", detail)
        deadline = arrived + self.settings.deadline_s
        self._in_flight += len(samples)
        try:
            if len(samples) == 1:  # the single-request path: no task to create and schedule for one sample
                outcomes = [await _outcome(self._score_one(samples[0], deadline))]
            else:
                outcomes = await asyncio.gather(*(self._score_one(s, deadline) for s in samples),
                                                return_exceptions=True)
        except asyncio.CancelledError:
            self.metrics.abandoned.inc(len(samples))
            raise
        finally:
            self._in_flight -= len(samples)
        faults = [(index, o) for index, o in enumerate(outcomes) if isinstance(o, BaseException)]
        if faults:
            index, fault = min(faults, key=lambda item: _fault_rank(item[1]))
            if not isinstance(fault, ServiceFault):
                raise fault
            where = f"sample {index}: " if len(samples) > 1 else ""
            raise ServiceFault(fault.http_status, fault.status, where + fault.detail)
        return outcomes

    async def _score_one(self, raw: RawSample, deadline: float) -> dict:
        loop = asyncio.get_running_loop()
        started = loop.time()
        try:
            scorer = self.router.scorer(routing.data_source(raw.data_source, raw.metadata, raw.label))
        except routing.UnknownSource as problem:
            scorer, result = None, {"status": "unknown_source", "http_status": 400, "detail": str(problem)}
        sample = None
        if scorer is not None:
            settings = self.settings
            sample = build_sample(raw.response, raw.label, raw.metadata, settings.max_response_chars,
                                  settings.test_fault_injection, settings.max_depth,
                                  None if scorer == "code" else settings.max_label_chars)
            result = await self._run_scorer(scorer, sample, raw, deadline)
        elapsed = loop.time() - started
        status = result["status"]
        self.metrics.count_score(status)
        self.metrics.latency.observe(elapsed)
        if status != "overloaded":
            self.window.record(status in WINDOW_FAULTS)
        if status == "ok":
            self.readiness.saw_ok()
        if status in LOGGED_STATUSES:
            log.log(LOGGED_STATUSES[status], "scoring fault", extra={
                "status": status, "sample_hash": sample_hash(raw.prompt, raw.response, raw.label),
                "detail": result.get("detail"), "elapsed_ms": round(elapsed * 1000, 1),
            })
        if "http_status" in result:
            raise ServiceFault(result["http_status"], status, result["detail"])
        result["backend"] = self.settings.backend
        result["elapsed_ms"] = round(elapsed * 1000, 2)
        result["scorer"] = scorer
        if sample.truncated:
            result["truncated"] = True
        return result

    async def _run_scorer(self, scorer: str, sample, raw: RawSample, deadline: float) -> dict:
        if sample.problem:
            status, detail = sample.problem
            return {"reward": 0.0, "status": status, "detail": detail}
        if scorer == "math":
            try:
                queue_deadline = deadline - self.settings.hard_timeout_s
                return await self.pool.score(sample.golds, sample.response, sample.fault, queue_deadline)
            except QueueDeadline:
                return {"status": "overloaded", "http_status": 503,
                        "detail": f"no worker could start it within {self.settings.queue_deadline_s:g} s of its "
                        f"arrival (REWARD_DEADLINE_S {self.settings.deadline_s:g} s less the hard timeout)"}
            except ScorerFault as fault:
                return {"status": "error", "http_status": 500, "detail": str(fault)}
        if scorer == "code":
            try:
                # The deadline covers waiting for a sandbox slot, every attempt and the backoff between them.
                async with asyncio.timeout_at(deadline):
                    return await codescore.score_code(self.sandbox, sample.response, raw.label,
                                                      self.settings.sandbox_max_tests)
            except TimeoutError:
                return {"status": "overloaded", "http_status": 503,
                        "detail": f"the sandbox did not run its test cases within {self.settings.deadline_s:g} s "
                        "of its arrival (REWARD_DEADLINE_S)"}
            except SandboxFault as fault:
                return {"status": "sandbox_unavailable", "http_status": 502, "detail": str(fault)}
        return CUSTOM_SCORERS[scorer](sample.golds, sample.response)


async def _outcome(scoring) -> dict | Exception:
    """The sample's result or its exception, as asyncio.gather(return_exceptions=True) would give it."""
    try:
        return await scoring
    except Exception as error:
        return error


def _fault_rank(fault: BaseException) -> int:
    """Report the most serious fault of a batch: a scorer bug before a full queue."""
    if isinstance(fault, ServiceFault):
        return {500: 0, 502: 0, 400: 1}.get(fault.http_status, 2)
    return -1
