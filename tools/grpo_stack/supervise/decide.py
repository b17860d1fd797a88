"""After each attempt: done, resubmit, or give up, with the reason a user reads in `status`.

A run is done only when it reached its total steps: an exit 0 with work left is a failure (slime 1558, verl 7401).
A resubmission always goes through the submit's resume gate; the supervisor gives up instead of retrying when a
retry cannot help: the submit refused the run (configuration, world size), the checkpoint state cannot be read,
a resumed attempt did not resume (its first logged step is not the checkpoint's plus one), the retry budget is
spent, or attempts keep failing without saving a new checkpoint (a crash loop).
"""

from __future__ import annotations

import signal
from dataclasses import dataclass
from typing import Protocol

from .records import Attempt
from .steps import LoggedSteps

DONE, RESUBMIT, GIVE_UP = "done", "resubmit", "give-up"


class CheckpointState(Protocol):
    """Where a resubmission would start, as the submit's resume gate reads it (grpo_stack.job.resume.ResumeState)."""

    kind: str  # fresh | resume | unknown | overwrite
    step: int | None
    detail: str


@dataclass(frozen=True)
class Policy:
    total_steps: int | None  # None: not known before the run (verl states it at start; steps.stated_total)
    retries: int  # resubmissions allowed after the first attempt
    resume_mode: str = "auto"  # global.job.resume.mode: only auto resumes from the newest checkpoint
    stall_attempts: int = 2  # failed attempts in a row that saved no new checkpoint: give up


@dataclass(frozen=True)
class Outcome:
    start_step: int  # the checkpoint step the attempt resumed from (0: fresh)
    exit_status: int | None  # the driver's; None when the driver, its pod or its node was lost
    logged: LoggedSteps
    refused: str = ""  # the submit's refusal, when it refused before starting anything
    stopped: bool = False  # stopped on purpose (`ray job stop`, a deadline): never resubmitted
    stalled: str = ""  # stopped by the stall detector (stall.action: resubmit), why: a failure like any other


@dataclass(frozen=True)
class Decision:
    action: str
    reason: str


def checkpoint_step(state: CheckpointState) -> int | None:
    return state.step if state.kind == "resume" else None


def decide(policy: Policy, earlier: list[Attempt], outcome: Outcome, state: CheckpointState) -> Decision:
    """`earlier`: the attempts before this one; `state`: where a resubmission would start, read now."""
    number = len(earlier) + 1
    if outcome.refused:
        return Decision(GIVE_UP, f"the submit refused attempt {number}: {outcome.refused}")
    if outcome.stopped:
        return Decision(GIVE_UP, f"attempt {number} was stopped (ray job stop): not resubmitted")
    first, last = outcome.logged.first, outcome.logged.last
    if outcome.start_step and first is not None and first != outcome.start_step + 1:
        return Decision(GIVE_UP, f"attempt {number} was to resume from the step-{outcome.start_step} checkpoint but "
                                 f"logged step {first} first (expected {outcome.start_step + 1}): it did not resume; "
                                 "stopped before it overwrites later checkpoints")
    saved = checkpoint_step(state)
    reached = max(s for s in (last, saved, outcome.start_step) if s is not None)
    total = policy.total_steps
    if outcome.exit_status == 0 and total is None:
        return Decision(DONE, f"finished at step {reached} (the total was not stated: not verified)")
    if outcome.exit_status == 0 and total is not None and reached >= total:
        return Decision(DONE, f"finished: step {reached} of {total}")
    failure = _failure(outcome, reached, total)
    if state.kind == "unknown":
        return Decision(GIVE_UP, f"{failure}; cannot tell where a resubmission would start ({state.detail})")
    if number > policy.retries:
        return Decision(GIVE_UP, f"{failure}; retry budget of {policy.retries} resubmission(s) spent")
    if saved is not None and policy.resume_mode != "auto":
        return Decision(GIVE_UP, f"{failure}; resume.mode is {policy.resume_mode}: a resubmission would not start "
                                 f"from the newest checkpoint (step {saved}); set global.job.resume.mode: auto")
    previous = earlier[len(earlier) - policy.stall_attempts + 1:] if policy.stall_attempts > 1 else []
    stalled = [(a.checkpoint or 0) == a.start_step for a in previous] + [(saved or 0) == outcome.start_step]
    if len(stalled) == policy.stall_attempts and all(stalled):
        return Decision(GIVE_UP, f"{failure}; {policy.stall_attempts} attempts in a row saved no new checkpoint "
                                 f"(last: {_where(saved)}): a crash loop, not a transient fault")
    return Decision(RESUBMIT, f"{failure}; resubmitting (attempt {number + 1} of {policy.retries + 1}) from "
                              f"{_where(saved)}")


def _failure(outcome: Outcome, reached: int, total: int | None) -> str:
    of = f" of {total}" if total is not None else ""
    if outcome.stalled:
        return f"stalled at step {reached}{of} and stopped ({outcome.stalled})"
    if outcome.exit_status == 0:
        return f"exited 0 at step {reached}{of}: {total - reached} step(s) left"  # total is known here
    if outcome.exit_status is None:
        return f"driver lost at step {reached}{of} (its head, pod or node went away)"
    if outcome.exit_status > 128:  # a shell's report of a signal (Ray's driver_exit_code of a killed driver)
        try:
            name = signal.Signals(outcome.exit_status - 128).name
        except ValueError:
            name = f"signal {outcome.exit_status - 128}"
        return f"driver killed by {name} (exit {outcome.exit_status}) at step {reached}{of}"
    return f"driver exited {outcome.exit_status} at step {reached}{of}"


def _where(step: int | None) -> str:
    return f"the step-{step} checkpoint" if step else "step 0 (no checkpoint yet)"
