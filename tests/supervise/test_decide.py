"""Every supervisor decision, each with the reason a user reads in `status` (tools/grpo_stack/supervise/decide.py).
Checkpoint states are read by the submit's own resume gate from real directories in the verl layout."""

from __future__ import annotations

from pathlib import Path

import pytest
from grpo_stack.job.resume import TRACKER, resume_state
from grpo_stack.supervise.decide import DONE, GIVE_UP, RESUBMIT, Outcome, Policy, decide
from grpo_stack.supervise.records import Attempt
from grpo_stack.supervise.steps import LoggedSteps, logged_steps, stated_total

POLICY = Policy(total_steps=4, retries=2)


def checkpoints(root: Path, *steps: int, tracker: int | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for step in steps:
        (root / f"global_step_{step}" / "actor").mkdir(parents=True)
    if tracker is not None or steps:
        (root / TRACKER).write_text(str(tracker if tracker is not None else max(steps)))
    return root


def state(root: Path):
    return resume_state("verl", str(root), "auto", None)


def attempt(n: int, start: int, checkpoint: int | None) -> Attempt:
    return Attempt(n, 0.0, 1.0, start, checkpoint, checkpoint, "driver exited 1")


def test_all_steps_and_exit_0_is_done(tmp_path):
    d = decide(POLICY, [], Outcome(0, 0, LoggedSteps(1, 4)), state(checkpoints(tmp_path, 2, 4)))
    assert (d.action, d.reason) == (DONE, "finished: step 4 of 4")


def test_exit_0_with_steps_left_is_a_failure_and_resubmitted(tmp_path):
    d = decide(POLICY, [], Outcome(0, 0, LoggedSteps(1, 2)), state(checkpoints(tmp_path, 2)))
    assert d.action == RESUBMIT
    assert d.reason.startswith("exited 0 at step 2 of 4: 2 step(s) left; resubmitting (attempt 2 of 3) from the "
                               "step-2 checkpoint")


def test_a_lost_driver_is_resubmitted_from_the_newest_checkpoint(tmp_path):
    d = decide(POLICY, [], Outcome(0, None, LoggedSteps(1, 3)), state(checkpoints(tmp_path, 2)))
    assert d.action == RESUBMIT and "driver lost at step 3 of 4" in d.reason and "step-2 checkpoint" in d.reason


def test_no_checkpoint_yet_resubmits_from_step_0_once(tmp_path):
    d = decide(POLICY, [], Outcome(0, 1, LoggedSteps(None, None)), state(tmp_path / "none"))
    assert d.action == RESUBMIT and d.reason.endswith("from step 0 (no checkpoint yet)")


def test_retry_budget_spent(tmp_path):
    earlier = [attempt(1, 0, 1), attempt(2, 1, 2)]
    d = decide(POLICY, earlier, Outcome(2, 1, LoggedSteps(3, 3)), state(checkpoints(tmp_path, 1, 2, 3)))
    assert d.action == GIVE_UP and d.reason.endswith("retry budget of 2 resubmission(s) spent")


def test_a_resume_that_restarts_from_step_1_gives_up(tmp_path):
    """A checkpoint at step 2, but the attempt logged step 1 first: it started over (slime 1558, verl 7401)."""
    d = decide(POLICY, [attempt(1, 0, 2)], Outcome(2, 1, LoggedSteps(1, 1)), state(checkpoints(tmp_path, 2)))
    assert d.action == GIVE_UP
    assert "was to resume from the step-2 checkpoint but logged step 1 first (expected 3)" in d.reason


def test_tracker_and_step_directories_disagree(tmp_path):
    root = checkpoints(tmp_path, 2, tracker=3)  # the tracker names a step whose directory is missing
    d = decide(POLICY, [], Outcome(0, 1, LoggedSteps(1, 3)), state(root))
    assert d.action == GIVE_UP and "cannot tell where a resubmission would start" in d.reason
    assert "says step 3" in d.reason


def test_the_submit_refusing_is_not_retried(tmp_path):
    why = "global_step_2 was written by 1 ranks (world size 1) but the values ask for 1 node(s) x 2 GPUs (world size 2)"
    d = decide(POLICY, [], Outcome(2, None, LoggedSteps(None, None), refused=why), state(checkpoints(tmp_path, 2)))
    assert d.action == GIVE_UP and d.reason == f"the submit refused attempt 1: {why}"


def test_two_attempts_without_a_new_checkpoint_is_a_crash_loop(tmp_path):
    root = checkpoints(tmp_path, 2)
    first = decide(POLICY, [], Outcome(2, 1, LoggedSteps(3, 3)), state(root))
    assert first.action == RESUBMIT
    second = decide(POLICY, [attempt(1, 2, 2)], Outcome(2, 1, LoggedSteps(3, 3)), state(root))
    assert second.action == GIVE_UP and "2 attempts in a row saved no new checkpoint (last: the step-2 checkpoint)" \
        in second.reason


def test_progress_between_failures_is_not_a_crash_loop(tmp_path):
    d = decide(POLICY, [attempt(1, 0, 2)], Outcome(2, 1, LoggedSteps(3, 3)), state(checkpoints(tmp_path, 2, 3)))
    assert d.action == RESUBMIT


@pytest.mark.parametrize("mode", ["fromPath", "disable"])
def test_a_mode_that_would_not_resume_the_newest_checkpoint_gives_up(tmp_path, mode):
    policy = Policy(total_steps=4, retries=2, resume_mode=mode)
    d = decide(policy, [], Outcome(0, 1, LoggedSteps(1, 2)), state(checkpoints(tmp_path, 2)))
    assert d.action == GIVE_UP and f"resume.mode is {mode}" in d.reason


def test_verl_console_steps_are_read_with_ray_prefixes():
    text = ("(TaskRunner pid=12) step:3 - actor/pg_loss:0.1 - critic/score/mean:0.5\n"
            "unrelated step:9 text\nstep:4 - timing_s/step:2.0\n")
    assert logged_steps(text, "verl") == LoggedSteps(3, 4)
    assert logged_steps(text, "miles") == LoggedSteps(None, None)


def test_verl_states_its_total_at_start():
    text = "(TaskRunner pid=7) Total training steps: 12\nstep:1 - x:1\n"
    assert stated_total(text, "verl") == 12 and stated_total("step:1 - x:1", "verl") is None


def test_an_exit_0_with_no_stated_total_is_done_but_says_it_was_not_verified(tmp_path):
    d = decide(Policy(None, 2), [], Outcome(0, 0, LoggedSteps(1, 3)), state(checkpoints(tmp_path, 3)))
    assert (d.action, d.reason) == (DONE, "finished at step 3 (the total was not stated: not verified)")


def test_a_stopped_attempt_is_not_resubmitted(tmp_path):
    d = decide(POLICY, [], Outcome(0, None, LoggedSteps(1, 2), stopped=True), state(checkpoints(tmp_path, 2)))
    assert (d.action, d.reason) == (GIVE_UP, "attempt 1 was stopped (ray job stop): not resubmitted")


def test_a_signal_exit_is_named(tmp_path):
    d = decide(POLICY, [], Outcome(0, 137, LoggedSteps(1, 2)), state(checkpoints(tmp_path, 2)))
    assert d.reason.startswith("driver killed by SIGKILL (exit 137) at step 2 of 4; resubmitting")


def test_the_validation_before_training_is_not_a_training_step():
    """verl validates before training (val_before_train) and logs it at the step it resumed from."""
    resumed = ("step:2 - val-core/openai/gsm8k/reward/mean@1:0.25 - val-aux/num_turns/min:2\n"
               "step:3 - actor/pg_loss:0.01 - val-core/x:0.2\nstep:4 - actor/pg_loss:0.02\n")
    assert logged_steps(resumed, "verl") == LoggedSteps(3, 4)
    assert logged_steps("step:0 - val-core/x:0.1\n", "verl") == LoggedSteps(None, None)


def test_the_lines_of_verls_v1_trainer_as_its_ray_job_log_holds_them():
    """As the loop tier's real run logged them: Ray's coloured actor prefix, verl's logging prefix on the total."""
    text = ("\x1b[36m(TaskRunnerV1 pid=30478)\x1b[0m INFO:2026-12-03 08:08:42,541:Total training steps: 4\n"
            "\x1b[36m(TaskRunnerV1 pid=30478)\x1b[0m step:0 - val-core/x:0.5\n"
            "\x1b[36m(TaskRunnerV1 pid=30478)\x1b[0m step:1 - global_seqlen/min:409.0 - actor/pg_loss:0.1\n")
    assert stated_total(text, "verl") == 4
    assert logged_steps(text, "verl") == LoggedSteps(1, 1)


def test_an_attempt_stopped_for_a_stall_is_resubmitted_from_the_newest_checkpoint(tmp_path):
    """Unlike a `ray job stop` by hand, a stop by the stall detector (stall.action: resubmit) is a failure."""
    outcome = Outcome(2, None, LoggedSteps(3, 3), stalled="no new step in 700 s after step 3")
    d = decide(POLICY, [], outcome, state(checkpoints(tmp_path, 2, 3)))
    assert d.action == RESUBMIT
    assert d.reason == ("stalled at step 3 of 4 and stopped (no new step in 700 s after step 3); resubmitting "
                        "(attempt 2 of 3) from the step-3 checkpoint")
