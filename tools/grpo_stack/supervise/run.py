"""The supervision loop: submit, wait, record, decide; again until done or given up.

Only the transport differs between where runs execute (a Ray job on the release's cluster, a local Ray head in
the loop tier): it submits one attempt through the project's in-pod submit, whose resume gate decides where the
attempt starts, and waits for it to end, returning the driver's exit status (None when the driver was lost) and
its console output.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Protocol

from . import records
from .decide import RESUBMIT, CheckpointState, Decision, Outcome, Policy, checkpoint_step, decide
from .steps import logged_steps, stated_total


class Refused(Exception):
    """The submit refused the attempt before starting anything (its message says why)."""


class Stopped(Exception):
    """The attempt was stopped on purpose (`ray job stop`): the message says by what."""


class Stalled(Exception):
    """The attempt was stopped because it stalled (the values' stall.action: resubmit): a failure, resubmitted."""

    def __init__(self, reason: str, text: str):
        super().__init__(reason)
        self.reason, self.text = reason, text


class Transport(Protocol):
    def submit(self) -> str:
        """Start one attempt through the in-pod submit; its job id. Raises Refused."""

    def wait(self, job_id: str) -> tuple[int | None, str]:
        """Block until the attempt ends: (driver exit status or None when lost, console output). Raises Stopped
        when it was stopped on purpose, Stalled when it was stopped for a stall."""


def supervise(transport: Transport, policy: Policy, checkpoint_dir: str, framework: str,
              read_state: Callable[[], CheckpointState], clock: Callable[[], float] = time.time,
              report: Callable[[str], None] = print) -> Decision:
    earlier: list[records.Attempt] = []  # this supervision's attempts: the retry budget is per supervision
    while True:
        number = len(records.read(checkpoint_dir)) + 1  # numbered across every supervision of the run
        start = checkpoint_step(read_state()) or 0
        started, job_id, status, text, refused, stopped, stalled = clock(), "", None, "", "", False, ""
        try:
            job_id = transport.submit()
            status, text = transport.wait(job_id)
        except Refused as exc:
            refused = str(exc)
        except Stopped:
            stopped = True
        except Stalled as exc:
            stalled, text = exc.reason, exc.text
        after = read_state()
        if policy.total_steps is None and (total := stated_total(text, framework)) is not None:
            policy = replace(policy, total_steps=total)
        outcome = Outcome(start, status, logged_steps(text, framework), refused, stopped, stalled)
        decision = decide(policy, earlier, outcome, after)
        attempt = records.Attempt(attempt=number, started=started, ended=clock(), start_step=start,
                                  last_step=outcome.logged.last, checkpoint=checkpoint_step(after),
                                  end=decision.reason, job_id=job_id)
        records.append(checkpoint_dir, attempt)
        earlier.append(attempt)
        report(f"attempt {number}: {decision.reason}")
        if decision.action != RESUBMIT:
            return decision
