"""The stall detector's decisions (grpo_stack.supervise.stall), on a simulated clock: the bound before the first
step comes from the values, after it from the attempt's own steps; a slow run that keeps logging steps is never a
stall; a stall clears at the next step."""

from __future__ import annotations

from grpo_stack.supervise.stall import StallDetector, StallPolicy

POLICY = StallPolicy(factor=3.0, floor_s=60.0, startup_s=900.0)


def run_steps(detector: StallDetector, start: float, durations: list[float]) -> float:
    now = start
    for i, took in enumerate(durations, 1):
        now += took
        detector.step(i, now, seconds=took)
    return now


def test_before_the_first_step_the_bound_is_the_values_startup():
    d = StallDetector(POLICY, started=0.0)
    assert not d.check(899.0).stalled
    verdict = d.check(901.0)
    assert verdict.stalled and "startupSeconds 900" in verdict.reason


def test_no_step_for_factor_times_the_longest_recent_step_is_a_stall():
    d = StallDetector(POLICY, started=0.0)
    now = run_steps(d, 300.0, [40.0, 50.0, 45.0])
    assert d.bound() == 150.0  # 3 x 50 s, over the 60 s floor
    assert not d.check(now + 149.0).stalled
    verdict = d.check(now + 151.0)
    assert verdict.stalled and "after step 3" in verdict.reason and "bound 150 s" in verdict.reason


def test_the_floor_holds_for_fast_steps():
    d = StallDetector(POLICY, started=0.0)
    now = run_steps(d, 100.0, [2.0, 3.0])
    assert d.bound() == 60.0
    assert not d.check(now + 59.0).stalled and d.check(now + 61.0).stalled


def test_a_slow_but_progressing_run_is_never_a_stall():
    """Each step 60 % slower than the one before (3.7 s to 400 s): checked every second, never flagged."""
    d = StallDetector(POLICY, started=0.0)
    now, took = 500.0, 2.0
    d.step(1, now, seconds=took)
    for step in range(2, 13):
        took *= 1.6
        for t in range(int(took)):
            assert not d.check(now + t).stalled, (step, t, d.bound())
        now += took
        d.step(step, now, seconds=took)


def test_a_stall_clears_at_the_next_step():
    d = StallDetector(POLICY, started=0.0)
    now = run_steps(d, 100.0, [10.0, 10.0])
    assert d.check(now + 100.0).stalled
    d.step(3, now + 100.0, seconds=100.0)
    assert not d.check(now + 101.0).stalled


def test_a_checkpoint_or_validation_step_gets_the_longest_one_seen_on_top():
    policy = StallPolicy(factor=3.0, floor_s=60.0, startup_s=900.0, save_freq=4, test_freq=0)
    d = StallDetector(policy, started=0.0)
    now = run_steps(d, 100.0, [30.0, 30.0])
    assert d.bound() == 90.0  # step 3 saves nothing
    d.step(3, now + 30.0, seconds=30.0)
    assert d.bound() == 90.0 + 60.0  # step 4 saves: no checkpoint seen yet, the floor on top
    d.step(4, now + 30.0 + 200.0, seconds=200.0, phases={"save_checkpoint": 170.0})
    d.step(5, now + 260.0, seconds=30.0)
    d.step(6, now + 290.0, seconds=30.0)
    d.step(7, now + 320.0, seconds=30.0)
    assert d.bound() == 3 * 200.0 + 170.0  # the 200 s step is still among the last 5; step 8 saves


def test_a_miles_checkpoint_is_read_by_its_own_timer_name():
    """miles times a save as `save_model` (perf/save_model_time), verl as `save_checkpoint`: either is a checkpoint
    whose time the next saving step's bound carries."""
    policy = StallPolicy(factor=3.0, floor_s=60.0, startup_s=900.0, save_freq=2, test_freq=0)
    d = StallDetector(policy, started=0.0)
    now = run_steps(d, 100.0, [30.0, 30.0, 30.0])  # steps 1-3
    d.step(4, now + 30.0, seconds=30.0, phases={"train": 25.0, "save_model": 500.0})
    assert d.bound() == 3 * 30.0  # step 5 saves nothing
    d.step(5, now + 60.0, seconds=30.0)
    assert d.bound() == 3 * 30.0 + 500.0  # step 6 saves: the save seen on top, not the 60 s floor


def test_a_record_read_twice_changes_nothing():
    d = StallDetector(POLICY, started=0.0)
    d.step(1, 100.0, seconds=10.0)
    d.step(1, 400.0, seconds=10.0)
    assert d.last_seen == 100.0 and list(d.recent) == [10.0]


def test_idle_gpus_while_the_attempt_runs_are_a_stall_when_the_policy_names_a_bound():
    d = StallDetector(StallPolicy(floor_s=600.0, gpu_idle_s=300.0), started=0.0)
    d.step(1, 100.0, seconds=50.0)
    assert not d.check(200.0, gpu_idle_for=299.0).stalled
    verdict = d.check(200.0, gpu_idle_for=301.0)
    assert verdict.stalled and "GPUs idle for 301 s" in verdict.reason
    assert not StallDetector(StallPolicy(floor_s=600.0), 0.0).check(10.0, gpu_idle_for=10_000.0).stalled
