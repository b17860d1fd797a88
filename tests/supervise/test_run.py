"""The supervision loop end to end with real processes: each attempt is a process that writes checkpoints in
verl's layout and verl's console step lines (trainer.py), killed, exiting early or restarting as a scenario says;
the resume gate is the submit's own (grpo_stack.job.resume) over the real directory; the attempts land on the
run's storage. Where the check stops: the attempt is a stand-in for the driver; the real verl trainer under this
same loop is the loop tier's (tests/loop)."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from grpo_stack.job.resume import resume_state
from grpo_stack.supervise import records
from grpo_stack.supervise.decide import DONE, GIVE_UP, Policy
from grpo_stack.supervise.run import Refused, Stalled, supervise

TRAINER = Path(__file__).with_name("trainer.py")
TOTAL = 4


class Processes:
    """One trainer process per attempt, behaving as `script` says attempt by attempt."""

    def __init__(self, root: Path, script: list[str]):
        self.root, self.script, self.submitted = root, list(script), 0

    def submit(self) -> str:
        self.submitted += 1
        behaviour = self.script.pop(0)
        if behaviour.startswith("refuse"):
            raise Refused(behaviour)
        self.proc = subprocess.Popen([sys.executable, str(TRAINER), str(self.root), str(TOTAL), behaviour],
                                     stdout=subprocess.PIPE, text=True)
        return f"attempt-{self.submitted}"

    def wait(self, job_id: str) -> tuple[int | None, str]:
        out, _ = self.proc.communicate(timeout=60)
        return (None if self.proc.returncode == -signal.SIGKILL else self.proc.returncode), out


def run(tmp_path: Path, script: list[str], retries: int = 2, total: int | None = TOTAL) -> tuple:
    root = tmp_path / "ckpt"
    transport = Processes(root, script)
    lines: list[str] = []
    decision = supervise(transport, Policy(total, retries), str(root), "verl",
                         lambda: resume_state("verl", str(root), "auto", None), report=lines.append)
    return decision, records.read(root), lines, transport


def test_a_killed_attempt_is_resumed_at_the_next_step_and_finishes(tmp_path):
    decision, attempts, lines, _ = run(tmp_path, ["kill@3", "ok"])
    assert decision.action == DONE and decision.reason == "finished: step 4 of 4"
    assert [(a.start_step, a.last_step, a.checkpoint) for a in attempts] == [(0, 2, 2), (2, 4, 4)]
    assert lines[0] == ("attempt 1: driver lost at step 2 of 4 (its head, pod or node went away); resubmitting "
                        "(attempt 2 of 3) from the step-2 checkpoint")


def test_an_early_exit_0_is_a_failure_then_resumed(tmp_path):
    decision, attempts, lines, _ = run(tmp_path, ["exit0@2", "ok"])
    assert decision.action == DONE
    assert lines[0].startswith("attempt 1: exited 0 at step 2 of 4: 2 step(s) left; resubmitting")
    assert attempts[1].start_step == 2


def test_a_resubmission_that_starts_over_is_stopped(tmp_path):
    decision, attempts, _, _ = run(tmp_path, ["kill@3", "restart"])
    assert decision.action == GIVE_UP and "logged step 1 first (expected 3)" in decision.reason
    assert attempts[-1].end == decision.reason


def test_a_crash_loop_gives_up_before_the_budget(tmp_path):
    decision, attempts, _, transport = run(tmp_path, ["kill@3"] * 6, retries=5)
    assert decision.action == GIVE_UP and "saved no new checkpoint" in decision.reason
    assert transport.submitted == 3  # progress on the first; none on the next two


def test_the_budget_ends_supervision(tmp_path):
    decision, attempts, _, transport = run(tmp_path, ["kill@2", "kill@3", "kill@4", "ok"], retries=2)
    assert decision.action == GIVE_UP and decision.reason.endswith("retry budget of 2 resubmission(s) spent")
    assert transport.submitted == 3 and [a.attempt for a in attempts] == [1, 2, 3]


def test_a_refused_resubmission_is_recorded_and_ends_it(tmp_path):
    decision, attempts, _, _ = run(tmp_path, ["kill@3", "refused: world size 1 checkpoint, world size 2 asked"])
    assert decision.action == GIVE_UP and "the submit refused attempt 2" in decision.reason
    assert attempts[-1].job_id == "" and attempts[-1].checkpoint == 2


def test_attempts_are_numbered_across_supervisions(tmp_path):
    run(tmp_path, ["exit0@1", "kill@2", "kill@2"], retries=1)
    decision, attempts, _, _ = run(tmp_path, ["ok"])
    assert decision.action == DONE and [a.attempt for a in attempts] == [1, 2, 3]


def test_the_total_verl_states_is_the_one_checked(tmp_path):
    """With no total known before the run, the attempt's own `Total training steps:` line sets it: an exit 0 at
    step 2 is then a failure, not a finish."""
    decision, attempts, lines, _ = run(tmp_path, ["exit0@2", "ok"], total=None)
    assert lines[0].startswith("attempt 1: exited 0 at step 2 of 4: 2 step(s) left")
    assert decision.reason == "finished: step 4 of 4"


class StalledFirst(Processes):
    """The first attempt ends as the stall detector's stop leaves it (stall.action resubmit): killed mid-step."""

    def wait(self, job_id: str) -> tuple[int | None, str]:
        status, out = super().wait(job_id)
        if job_id == "attempt-1":
            raise Stalled("no new step in 700 s after step 2 (bound 600 s: ...)", out)
        return status, out


def test_an_attempt_stopped_for_a_stall_is_resumed_from_its_checkpoint(tmp_path):
    root = tmp_path / "ckpt"
    lines: list[str] = []
    decision = supervise(StalledFirst(root, ["kill@3", "ok"]), Policy(TOTAL, 2), str(root), "verl",
                         lambda: resume_state("verl", str(root), "auto", None), report=lines.append)
    attempts = records.read(root)
    assert decision.action == DONE
    assert lines[0] == ("attempt 1: stalled at step 2 of 4 and stopped (no new step in 700 s after step 2 (bound "
                        "600 s: ...)); resubmitting (attempt 2 of 3) from the step-2 checkpoint")
    assert [(a.start_step, a.last_step) for a in attempts] == [(0, 2), (2, 4)]
