"""What the in-pod submit does with a deadline: the banner line, the Ray job's env for verl, and for miles the
timer that creates the save sentinel one grace period ahead (the submit's supervisor process owns it)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from datetime import UTC, datetime

from .plan import VERL_ASSUMED_SAVE_S, Deadline, grace_seconds, miles_save_request_at, verl_redundant_time


def iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def describe(deadline: Deadline, framework: str, use_v1: bool, end: float, now: float) -> str:
    """One banner line: when the deadline falls and how the framework is told to save before it."""
    head = f"{iso(end)} (in {(end - now) / 3600:.2f} h)"
    if framework == "verl" and use_v1:
        return f"{head}; verl's v1 trainer does not save for it (grpo-lint GRPO907)"
    if framework == "verl":
        return (f"{head}; verl saves at the first step that ends with less than its longest step + "
                f"{VERL_ASSUMED_SAVE_S} s + {verl_redundant_time(deadline):g} s (trainer.esi_redundant_time) left, "
                "and keeps training")
    at = miles_save_request_at(deadline, end)
    grace = grace_seconds(deadline.step_s or 0.0, deadline.write_s, deadline.margin_s)
    return (f"{head}; miles is asked to save at {iso(at)} ({grace / 60:.1f} min ahead: a step, the write, the "
            "margin)")


def create_sentinel(path: str, report: Callable[[str], None]) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("deadline\n")
    report(f"deadline: save requested: created {path} (miles saves at the end of the step in flight)")


def schedule_sentinel(path: str, at: float, now: float, report: Callable[[str], None]) -> threading.Timer:
    """Create miles' sentinel at `at` (at once when that has passed: the deadline is less than a grace period
    away). A daemon timer: it dies with the submit, as the run's supervision does."""
    timer = threading.Timer(max(0.0, at - now), create_sentinel, (path, report))
    timer.daemon = True
    timer.start()
    return timer
