"""Fixtures for the loop tier: one World (storage, reward service, Ray head) and one scenario for the package.

The scenario is the tier's two launches and one refusal, serving every test (tests/loop/test_loop.py):
  1. `first`: a fresh 4-step run that holds step 3 at its start (LOOP_EVENTS); once step 1 is logged its training
     processes are stopped (SIGSTOP) until the submit reports a stall, then continued (SIGCONT) until it reports
     the stall cleared; SIGKILL to them during step 3 (after step 2's checkpoint);
  2. `resize`: the same values on 2 GPUs per node, submitted onto step 2's 1-rank checkpoint: refused, nothing runs;
  3. `resume`: the 1-GPU values again, with the weight sync after step 3 skipped and every step slowed past the
     stall floor (LOOP_EVENTS): resumes from the last checkpoint and ends at step 4; its step 4 is the negative
     control of the rollout/actor check, its slow steps the stall detector's.
The supervised submit serves the step metrics throughout; the harness scrapes them every second (World.scraper).
"""

from __future__ import annotations

import signal
import time
from dataclasses import dataclass, field

import pytest

from .harness import STEPS, Launch, World, alive

LAUNCH_TIMEOUT_S = 420
KILL_STEP = 3
SKIPPED_SYNC_AFTER = 3
STOP_AFTER_STEP = 1   # the first launch's training processes are stopped once this step is logged
SLOW_STEP_S = 12      # the resume's steps each sleep this long: over the overlay's stall floor (10 s)
POLL_SLACK_S = 30     # past the stated bound: the watch's 2 s poll and a loaded 2-core machine


def pytest_configure(config):
    config.addinivalue_line("markers", "loop: real GRPO steps of verl on the CPU through the in-pod submit")


@dataclass
class Scenario:
    world: World
    first: Launch
    tracker_at_kill: int
    killed: list[int]
    survivors: list[int]
    jobs_before_resize: list[str]
    resize: Launch
    jobs_after_resize: list[str]
    resume: Launch
    first_dirs: list[int]
    stall: dict = field(default_factory=dict)  # the SIGSTOP/SIGCONT event: bound, waits, scrapes, pids


# Package scope: the Ray head ends with tests/loop, before any other tier's Ray starts (or stops every Ray).
@pytest.fixture(scope="package")
def world(tmp_path_factory):
    with World(tmp_path_factory.mktemp("loop")) as w:
        yield w


@pytest.fixture(scope="package")
def scenario(world) -> Scenario:
    first = world.start("first", events={"hold_at_step": KILL_STEP})
    stall = stop_and_continue(world, first)
    tracker, pids = world.kill_during_step(first, KILL_STEP, LAUNCH_TIMEOUT_S)
    world.wait(first, 120)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.5)
    survivors = [p for p in pids if alive(p)]
    first_dirs = world.step_dirs()

    def jobs() -> list[str]:
        out = world.ray.helper("jobs")
        assert out.returncode == 0, out.stderr[-2000:]
        return sorted(__import__("json").loads(out.stdout.strip().splitlines()[-1]))

    before = jobs()
    resize = world.run("resize", gpus=2, timeout=120)
    after = jobs()
    resume = world.run("resume", timeout=LAUNCH_TIMEOUT_S,
                       events={"skip_weight_sync_after_step": SKIPPED_SYNC_AFTER, "slow_steps": SLOW_STEP_S})
    assert STEPS == 4
    return Scenario(world, first, tracker, pids, survivors, before, resize, after, resume, first_dirs, stall)


def stop_and_continue(world: World, launch: Launch) -> dict:
    """SIGSTOP the launch's training processes once step STOP_AFTER_STEP is in its step file; wait for the submit's
    stall report (up to the bound the overlay's policy gives after that step, plus POLL_SLACK_S); scrape; SIGCONT;
    wait for the report that the stall cleared; scrape. Returns what happened, for the tests to judge."""
    stall = world.values["global"]["job"]["supervision"]["stall"]
    out: dict = {}
    # The driver's and actors' pids from Ray's state API take seconds to ask: ask once the actors are up (verl's
    # trainer has opened its step file, before the validation it runs before training), so that the stop lands
    # right after step 1 is logged.
    if world.wait_for_record(launch, -1, LAUNCH_TIMEOUT_S) is None:
        raise AssertionError(f"{launch.name}: verl opened no step file:\n{launch.tail()}")
    roots = world.training_roots(launch)
    step = world.wait_for_record(launch, STOP_AFTER_STEP, LAUNCH_TIMEOUT_S)
    if step is None:
        raise AssertionError(f"{launch.name}: step {STOP_AFTER_STEP} never logged:\n{launch.tail()}")
    out["pids"] = world.signal_training(roots, signal.SIGSTOP)
    try:
        # Actors verl starts after the first ask (its agent-loop workers and their load balancer come up during the
        # validation) are asked for now, with the first set already stopped, and stopped too: left running beside
        # a stopped rollout server they time out, and the resumed run waits for them forever.
        late = [pid for pid in world.training_roots(launch) if pid not in roots]
        roots = roots + late
        out["pids"] = sorted(set(out["pids"]) | set(world.signal_training(late, signal.SIGSTOP)))
        if max(world.step_records(launch)) != STOP_AFTER_STEP:
            raise AssertionError(f"{launch.name}: step {STOP_AFTER_STEP + 1} ended before the stop landed")
        out["bound"] = max(stall["floorSeconds"], stall["factor"] * step["timing_s/step"])
        out["reported_after"] = world.wait_for_text(launch, "submit: stall: ", out["bound"] + POLL_SLACK_S)
        out["scrape_stalled"] = world.scraper.scrape()
    finally:
        world.signal_training(roots, signal.SIGCONT)
    out["cleared_after"] = world.wait_for_text(launch, "submit: stall cleared", LAUNCH_TIMEOUT_S)
    out["scrape_cleared"] = world.scraper.scrape()
    return out
