"""An attempt's watch (grpo_stack.supervise.watch) over a step file in verl's `file` tracker format, on a simulated
clock: a stall is reported once (the report, grpo_stall), cleared by the next step, and with stall.action resubmit
the attempt is stopped once, its reason kept for the supervisor. The loop tier runs it on verl's own file."""

from __future__ import annotations

import json

from grpo_stack.stepmetrics.exporter import StepMetrics
from grpo_stack.supervise.events import EventSink
from grpo_stack.supervise.stall import RESUBMIT, StallPolicy
from grpo_stack.supervise.watch import AttemptWatch


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def write_step(path, step: int, seconds: float) -> None:
    with path.open("a") as fh:
        fh.write(json.dumps({"step": step, "data": {"training/global_step": step, "timing_s/step": seconds}}) + "\n")


def watched(tmp_path, action: str):
    clock, lines, stops = Clock(), [], []
    metrics = StepMetrics("grpo")
    metrics.new_attempt("job-1")
    sink = EventSink(lines.append)
    sink.off = True  # not in a cluster
    watch = AttemptWatch(tmp_path / "steps.jsonl", StallPolicy(action=action, factor=3, floor_s=30, startup_s=600),
                         metrics, lambda: stops.append(1), lines.append, sink, clock=clock)
    return watch, clock, lines, stops, metrics


def test_a_stall_is_reported_once_and_cleared_by_the_next_step(tmp_path):
    watch, clock, lines, stops, metrics = watched(tmp_path, "report")
    steps = tmp_path / "steps.jsonl"
    clock.now += 100
    write_step(steps, 1, 20.0)
    watch.tick()
    assert metrics.last.step == 1 and not metrics.stalled
    clock.now += 59
    watch.tick()
    assert lines == []
    clock.now += 2
    watch.tick()
    watch.tick()
    assert len(lines) == 1 and lines[0].startswith("stall: no new step in 61 s after step 1 (bound 60 s")
    assert metrics.stalled and "grpo_stall{" in metrics.render() and metrics.render().count(" 1.0\n") >= 1
    write_step(steps, 2, 80.0)
    clock.now += 20
    watch.tick()
    assert lines[-1] == "stall cleared: step 2 logged"
    assert not metrics.stalled and stops == []


def test_resubmit_stops_the_attempt_once_and_keeps_the_reason(tmp_path):
    watch, clock, lines, stops, _ = watched(tmp_path, RESUBMIT)
    clock.now += 601
    watch.tick()
    watch.tick()
    assert stops == [1] and "startupSeconds 600" in watch.cancelled
    assert any("stopping the attempt" in line for line in lines)


def test_off_reports_nothing(tmp_path):
    watch, clock, lines, stops, metrics = watched(tmp_path, "off")
    clock.now += 10_000
    watch.tick()
    assert lines == [] and stops == [] and not metrics.stalled
