"""Watching one running attempt: its steps feed the step metrics and the stall detector; a stall is reported (the
supervisor's report, a Kubernetes Event, grpo_stall) and, when the values ask, the attempt is stopped so that the
supervisor resubmits it through the resume gate. The steps come from the process that trains, never the driver's
output: verl's TaskRunner writes them to the step file (its `file` tracker), miles' own Prometheus collector serves
them (stepmetrics/miles_steps.py)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from ..stepmetrics.exporter import StepMetrics
from ..stepmetrics.verl_steps import StepFile, StepRecord
from .events import EventSink
from .stall import OFF, RESUBMIT, StallDetector, StallPolicy

POLL_SECONDS = 2.0


class StepSource(Protocol):
    def new(self) -> list[StepRecord]:
        """The steps logged since the last call."""


class AttemptWatch:
    """A daemon thread from `start()` to `stop()`. `cancelled`: the stall reason when it stopped the attempt.
    `steps`: verl's step file, or any source of step records."""

    def __init__(self, steps: Path | StepSource, policy: StallPolicy, metrics: StepMetrics,
                 stop_job: Callable[[], None], report: Callable[[str], None], events: EventSink,
                 gpu_idle_for: Callable[[], float | None] = lambda: None, clock: Callable[[], float] = time.time,
                 poll: float = POLL_SECONDS):
        self.file: StepSource = StepFile(steps) if isinstance(steps, Path) else steps
        self.policy, self.metrics, self.stop_job, self.report, self.events = policy, metrics, stop_job, report, events
        self.gpu_idle_for, self.clock, self.poll = gpu_idle_for, clock, poll
        self.detector = StallDetector(policy, clock())
        self.stalled = ""
        self.cancelled = ""
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="grpo-attempt-watch", daemon=True)

    def start(self) -> AttemptWatch:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._done.set()
        self._thread.join(timeout=10)
        self.tick()  # the last records, so the metrics end at the last step
        self.metrics.set_stall(False)

    def _run(self) -> None:
        while not self._done.wait(self.poll):
            self.tick()

    def tick(self) -> None:
        now = self.clock()
        for record in self.file.new():
            self.metrics.update(record, now)
            self.detector.step(record.step, now, record.seconds, record.phases)
        if self.policy.action == OFF or self._done.is_set():
            return
        verdict = self.detector.check(now, self.gpu_idle_for())
        if verdict.stalled and not self.stalled:
            self.stalled = verdict.reason
            self.metrics.set_stall(True)
            self.report(f"stall: {verdict.reason}")
            self.events.emit("TrainingStalled", verdict.reason)
            if self.policy.action == RESUBMIT and not self.cancelled:
                self.cancelled = verdict.reason
                self.report("stall: stopping the attempt (stall.action: resubmit); the supervisor resubmits it "
                            "through the resume gate")
                self.stop_job()
        elif not verdict.stalled and self.stalled:
            self.stalled = ""
            self.metrics.set_stall(False)
            message = f"stall cleared: step {self.detector.last_step} logged"
            self.report(message)
            self.events.emit("TrainingResumed", message, "Normal")
