"""A followed run under supervision (`submit --follow`): each attempt is a Ray job on this head, started only
after the resume gate passes again, its logs streamed; after it ends the supervisor decides (grpo_stack.supervise):
done, resubmit (up to global.job.supervision.retries times), or give up with the reason, which is also recorded
on the run's storage (<checkpointDir>/grpo-stack/attempts.jsonl).

Where it stops: the supervisor runs in the submit's own process in the Ray head pod, so it outlives a lost driver,
worker or GPU node, not a lost head pod (the RayJob mode, docs/day-2.md, is the place for that).
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from ..supervise.decide import DONE, Decision, Policy
from ..supervise.run import Refused, Stopped, supervise
from .rayjobs import Ray
from .resume import ResumeState


class RayAttempts:
    """The supervisor's transport on this head: `regate` re-runs the submit's checks (None: go), then the job."""

    def __init__(self, ray: Ray, argv: list[str], env: dict[str, str], label: str, regate: Callable[[], str | None]):
        self.ray, self.argv, self.env, self.label, self.regate = ray, argv, env, label, regate
        self.submitted = 0
        self.last_driver: int | None = None

    def submit(self) -> str:
        if self.submitted:  # the first attempt passed the gate in the submit itself
            refusal = self.regate()
            if refusal:
                raise Refused(refusal)
        self.submitted += 1
        job_id = self.ray.submit(self.argv, self.env, 0, self.label)
        print(f"submit: Ray job id {job_id}" + (f" (attempt {self.submitted})" if self.submitted > 1 else ""),
              flush=True)
        return job_id

    def wait(self, job_id: str) -> tuple[int | None, str]:
        self.ray.follow(job_id)
        status, driver = self.ray.outcome(job_id)
        self.last_driver = driver
        print(f"submit: Ray job {job_id} ended {status}", file=sys.stdout if status == "SUCCEEDED" else sys.stderr)
        if status == "STOPPED":
            raise Stopped(job_id)
        return driver, self.ray.logs(job_id)


def follow(attempts: RayAttempts, policy: Policy, checkpoint_dir: str, framework: str,
           read_state: Callable[[], ResumeState]) -> int:
    """Supervise to the end; the exit status: 0 done, else the last driver's exit code (1 when it had none)."""
    decision: Decision = supervise(attempts, policy, checkpoint_dir, framework, read_state,
                                   report=lambda line: print(f"submit: {line}", flush=True))
    if decision.action == DONE:
        return 0
    print(f"submit: gave up: {decision.reason}", file=sys.stderr)
    driver = attempts.last_driver
    return driver if driver is not None and 0 < driver < 256 else 1
