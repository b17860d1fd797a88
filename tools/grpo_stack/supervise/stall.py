"""When a running attempt is stalled: the expected step time learnt from the attempt's own steps.

Before the attempt's first step the bound is the values' `startupSeconds` (Ray workers, model load, vLLM, the
validation verl runs before training, the first step). After it, a stall is no new step for
`max(floorSeconds, factor x the longest of the last WINDOW steps)`; a step that saves a checkpoint or validates
(the values' saveFreq / testFreq) may take longer than the steps around it, so its bound adds the longest
checkpoint and validation seen so far in the attempt (the floor before one was seen), read by the phase names
verl and miles time them by (stepmetrics/phases.py). A step's time is the wall
time between the records of two steps (validation and metrics included), the first one's verl's own
`timing_s/step`. Each new step resets the wait, so a slow run that keeps logging steps is never a stall, however
slow, as long as no step takes factor x longer than the slowest recent one.

A second, optional signal: GPUs idle for `gpu_idle_s` while the attempt lives (an input the caller measures: the
supervisor's is supervise/gpuidle.py, Ray's own reporter; the detector itself reads no GPU).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from ..stepmetrics.phases import CHECKPOINT, VALIDATION

WINDOW = 5
OFF, REPORT, RESUBMIT = "off", "report", "resubmit"


@dataclass(frozen=True)
class StallPolicy:
    action: str = REPORT  # off | report | resubmit (stop the Ray job; the supervisor resubmits through the gate)
    factor: float = 3.0
    floor_s: float = 600.0
    startup_s: float = 3600.0
    save_freq: int = 0  # trainer.saveFreq: steps that checkpoint (0: none)
    test_freq: int = 0  # trainer.testFreq: steps that validate (0: none)
    gpu_idle_s: float | None = None  # None: the GPU signal is not used
    gpu_idle_percent: float = 10.0  # below this a GPU counts as idle


@dataclass(frozen=True)
class Verdict:
    stalled: bool
    reason: str  # why, in the words the report and the Event carry ("" when not stalled)
    waited: float  # seconds since the last step (or the attempt's start)
    bound: float  # the wait that makes a stall


class StallDetector:
    def __init__(self, policy: StallPolicy, started: float):
        self.policy = policy
        self.started = started
        self.last_step: int | None = None
        self.last_seen: float | None = None
        self.recent: deque[float] = deque(maxlen=WINDOW)
        self.slow_phases = 0.0  # the longest checkpoint + validation of a step so far

    def step(self, step: int, now: float, seconds: float | None = None, phases: dict[str, float] | None = None):
        """A new step record, read at `now`; `seconds`: the step's own time (verl's timing_s/step, miles'
        perf/step_time); `phases`: its phases' times by name."""
        if self.last_step is not None and step <= self.last_step:
            return  # a record read twice, or a step logged again
        took = now - self.last_seen if self.last_seen is not None else seconds
        if took is not None:
            self.recent.append(max(took, seconds or 0.0))
        phases = phases or {}
        self.slow_phases = max(self.slow_phases, sum(phases.get(name, 0.0) for name in (*CHECKPOINT, *VALIDATION)))
        self.last_step, self.last_seen = step, now

    def bound(self) -> float:
        p = self.policy
        if self.last_step is None:
            return p.startup_s
        base = max(p.floor_s, p.factor * max(self.recent, default=0.0))
        nxt = self.last_step + 1
        if any(f and nxt % f == 0 for f in (p.save_freq, p.test_freq)):
            base += self.slow_phases or p.floor_s
        return base

    def check(self, now: float, gpu_idle_for: float | None = None) -> Verdict:
        bound = self.bound()
        waited = now - (self.last_seen if self.last_seen is not None else self.started)
        p = self.policy
        if waited > bound:
            if self.last_step is None:
                why = f"no step in {waited:.0f} s since the attempt started (bound: startupSeconds {bound:.0f} s)"
            else:
                longest = max(self.recent, default=0.0)
                why = (f"no new step in {waited:.0f} s after step {self.last_step} (bound {bound:.0f} s: "
                       f"{p.factor:g} x the longest recent step, {longest:.0f} s, floor {p.floor_s:.0f} s)")
            return Verdict(True, why, waited, bound)
        if p.gpu_idle_s is not None and gpu_idle_for is not None and gpu_idle_for >= p.gpu_idle_s:
            return Verdict(True, f"GPUs idle for {gpu_idle_for:.0f} s while the attempt runs (bound "
                                 f"{p.gpu_idle_s:.0f} s)", waited, bound)
        return Verdict(False, "", waited, bound)
