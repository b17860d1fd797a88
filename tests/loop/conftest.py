"""Fixtures for the loop tier: one World (storage, reward service, Ray head) and one scenario for the package.

The scenario is the tier's two launches and one refusal, serving every test (tests/loop/test_loop.py):
  1. `first`: a fresh 4-step run that holds step 3 at its start (LOOP_EVENTS); SIGKILL to its training processes
     there (after step 2's checkpoint);
  2. `resize`: the same values on 2 GPUs per node, submitted onto step 2's 1-rank checkpoint: refused, nothing runs;
  3. `resume`: the 1-GPU values again, with the weight sync after step 3 skipped (LOOP_EVENTS): resumes from the
     last checkpoint and ends at step 4; its step 4 is the negative control of the rollout/actor check.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import pytest

from .harness import STEPS, Launch, World, alive

LAUNCH_TIMEOUT_S = 420
KILL_STEP = 3
SKIPPED_SYNC_AFTER = 3


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


# Package scope: the Ray head ends with tests/loop, before any other tier's Ray starts (or stops every Ray).
@pytest.fixture(scope="package")
def world(tmp_path_factory):
    with World(tmp_path_factory.mktemp("loop")) as w:
        yield w


@pytest.fixture(scope="package")
def scenario(world) -> Scenario:
    first = world.start("first", events={"hold_at_step": KILL_STEP})
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
                       events={"skip_weight_sync_after_step": SKIPPED_SYNC_AFTER})
    assert STEPS == 4
    return Scenario(world, first, tracker, pids, survivors, before, resize, after, resume, first_dirs)
