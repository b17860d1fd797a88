"""Deadlines and stopping on a real run: verl 0.9.1's legacy trainer (`verl.useV1Trainer: false`, the trainer that
honours a deadline, grpo-lint GRPO907) from the builder's command, through the in-pod submit, on the loop tier's
World (tests/loop/harness.py). Two submits of one values file (the loop's overlay plus DEADLINE below), on their
own storage (the World's model and data linked in), so the tier's main scenario never sees them:

  1. `deadline`: a 4-step run with `deadline.hours: 24`, saveFreq 5 (no periodic save in 4 steps) and one
     resubmission allowed. At step 2 the trainer's clock, as verl's end-time check reads it, moves to one save and
     margin before the deadline the submit gave it (LOOP_EVENTS deadline_near_at_step); step 3 is held at its start
     and the harness runs `ray job stop` (SIGTERM, SIGKILL 3 s later) while it runs;
  2. `after-stop`: the same values with no retries: resumes from the deadline's checkpoint and runs to the end of
     its data, step 4 of the 6 verl states (`trainer.total_training_steps: 6`), and exits 0 there.

Where it stops: the end time reaches verl through the Ray job's env as the submit sets it, and verl's own check
decides and saves; only the clock it reads is moved (no run waits hours for its deadline). miles' sentinel is not
run here (miles does not train on a CPU, docs/loop.md).
"""

from __future__ import annotations

import json
import subprocess
import time
from dataclasses import dataclass

import pytest

from .harness import Launch, World, alive, clean_env, loop_values, merge, rendered

pytestmark = pytest.mark.loop

VERL_END_ENV = "SAGEMAKER_CURRENT_CAPACITY_BLOCK_EXPIRATION_TIMESTAMP"
NEAR_STEP, STOP_STEP, STATED_TOTAL, DATA_STEPS = 2, 3, 6, 4
DEADLINE = {"global": {"job": {
    "deadline": {"hours": 24, "marginMinutes": 1, "checkpointWriteMinutes": 0.5},
    "verl": {"useV1Trainer": False, "overrides": {"trainer.total_training_steps": STATED_TOTAL}},
    "trainer": {"saveFreq": 5, "checkpointDir": "checkpoints/deadline"},
    "supervision": {"retries": 1}}}}
LAUNCH_TIMEOUT_S = 420


@dataclass
class DeadlineRuns:
    world: World
    storage: object
    stopped: Launch
    stop_out: object
    tracker_after_stop: int | None
    dirs_after_stop: list[int]
    survivors: list[int]
    after: Launch
    tracker_after: int | None


def _spec(world: World, name: str, storage, retries: int):
    from grpo_stack.render import job_spec

    values = merge(loop_values(storage), DEADLINE)
    values["global"]["job"]["supervision"]["retries"] = retries
    path = world.root / f"{name}.json"
    path.write_text(json.dumps(job_spec(rendered(values))))
    return path


@pytest.fixture(scope="package")
def deadline_runs(world) -> DeadlineRuns:
    storage = world.root / "fsx-deadline"
    storage.mkdir(exist_ok=True)
    for part in ("models", "data"):  # the World's tiny model and prompts, on this run's own storage
        (storage / part).symlink_to(world.mount / part, target_is_directory=True)
    ckpt = storage / "checkpoints" / "deadline"

    def tracker() -> int | None:
        try:
            return int((ckpt / "latest_checkpointed_iteration.txt").read_text().strip())
        except (OSError, ValueError):
            return None

    def dirs() -> list[int]:
        return sorted(int(p.name.rsplit("_", 1)[1]) for p in ckpt.glob("global_step_*")) if ckpt.is_dir() else []

    stopped = world.start("deadline", spec=_spec(world, "deadline", storage, retries=1),
                          events={"deadline_near_at_step": NEAR_STEP, "legacy_hold_at_step": STOP_STEP})
    world.wait_for(stopped, f"loop-event: holding step {STOP_STEP}", LAUNCH_TIMEOUT_S)
    pids = world.training_pids(stopped)
    stop_out = world.stop_job(stopped)
    world.wait(stopped, 120)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.5)
    survivors = [p for p in pids if alive(p)]
    tracker_after_stop, dirs_after_stop = tracker(), dirs()
    after = world.run("after-stop", spec=_spec(world, "after-stop", storage, retries=0), timeout=LAUNCH_TIMEOUT_S)
    return DeadlineRuns(world, storage, stopped, stop_out, tracker_after_stop, dirs_after_stop, survivors, after,
                        tracker())


def test_a_deadline_one_step_away_gets_a_checkpoint_before_it(deadline_runs):
    """The submit put the end time in the Ray job's env, the trainer read it there, and verl's end-time check saved
    step 2, which saveFreq 5 would not have saved; the run then kept training (step 3 began)."""
    text = deadline_runs.stopped.text()
    env_line = next(ln for ln in text.splitlines() if ln.startswith(f"submit: runtime env {VERL_END_ENV}="))
    end = env_line.rsplit("=", 1)[1]
    assert f"{VERL_END_ENV}={end} in the trainer's env" in text, deadline_runs.stopped.tail()
    assert "submit: deadline:" in text and "verl saves at the first step that ends with less than" in text
    moved = text.index(f"loop-event: step {NEAR_STEP}:")
    saved = text.index("Force saving checkpoint: ESI instance expiration approaching.")
    assert moved < saved < text.index(f"loop-event: holding step {STOP_STEP}")
    assert sorted(deadline_runs.stopped.steps()) == [1, NEAR_STEP]
    assert deadline_runs.tracker_after_stop == NEAR_STEP and deadline_runs.dirs_after_stop == [NEAR_STEP]


def test_stop_mid_step_saves_nothing_and_is_not_resubmitted(deadline_runs):
    """`ray job stop` during step 3 (docs/day-2.md, Deadlines and stopping): the driver dies at SIGTERM (verl has
    no handler for it), the job ends STOPPED, no training process survives, step 3's work is lost (the tracker
    stays at the deadline's checkpoint), and the supervisor does not resubmit although a retry was left."""
    from grpo_stack.deadline import RAY_STOP_WAIT_S
    from grpo_stack.supervise import records

    runs = deadline_runs
    # The wait docs/day-2.md states, read from the Ray the loop runs (the image's version, 2.53.0).
    probe = subprocess.run([str(runs.world.python), "-c", "from ray.dashboard.modules.job.job_supervisor import "
                            "JobSupervisor as J; print(J.DEFAULT_RAY_JOB_STOP_WAIT_TIME_S, J.VALID_STOP_SIGNALS)"],
                           capture_output=True, text=True, env=clean_env(), timeout=120)
    assert probe.stdout.split("\n")[-2] == f"{RAY_STOP_WAIT_S} ['SIGINT', 'SIGTERM']", probe.stdout + probe.stderr
    assert runs.stop_out.returncode == 0, runs.stop_out.stdout + runs.stop_out.stderr
    text = runs.stopped.text()
    assert runs.stopped.rc == 1 and "ended STOPPED" in text, runs.stopped.tail()
    assert "submit: gave up: attempt 1 was stopped (ray job stop): not resubmitted" in text
    assert runs.survivors == []
    assert STOP_STEP not in runs.stopped.steps() and runs.dirs_after_stop == [NEAR_STEP]
    first = records.read(runs.storage / "checkpoints" / "deadline")[0]
    assert (first.start_step, first.checkpoint, first.end) == (0, NEAR_STEP, "attempt 1 was stopped (ray job stop): "
                                                               "not resubmitted")


def test_an_early_exit_0_is_reported_failed(deadline_runs):
    """The resubmit resumes from the deadline's checkpoint (first step 3), runs out of data at step 4 of the 6 verl
    stated, and its driver exits 0: the supervisor reports a failure with the steps left, and the submit exits 1."""
    from grpo_stack.supervise import records

    after = deadline_runs.after
    text = after.text()
    assert f"resumes from step {NEAR_STEP}" in text, after.tail()
    assert f"Total training steps: {STATED_TOTAL}" in text
    logged = sorted(s for s in after.steps() if s > 0)
    assert logged == list(range(NEAR_STEP + 1, DATA_STEPS + 1)), (logged, after.tail())
    assert "ended SUCCEEDED" in text and after.rc == 1, after.tail()
    reason = (f"exited 0 at step {DATA_STEPS} of {STATED_TOTAL}: {STATED_TOTAL - DATA_STEPS} step(s) left; retry "
              "budget of 0 resubmission(s) spent")
    assert f"submit: gave up: {reason}" in text
    attempts = records.read(deadline_runs.storage / "checkpoints" / "deadline")
    assert [(a.attempt, a.start_step, a.last_step, a.end) for a in attempts[1:]] == [
        (2, NEAR_STEP, DATA_STEPS, reason)]
