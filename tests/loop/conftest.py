"""Fixtures for the loop tier: one World (storage, reward service, Ray head) and one scenario per session.

The scenario is the tier's two launches and one refusal, serving every test (tests/loop/test_loop.py):
  1. `first`: a fresh 4-step run; SIGKILL to its training processes while step 3 runs (after step 2's checkpoint);
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


@pytest.fixture(scope="session")
def world(tmp_path_factory):
    with World(tmp_path_factory.mktemp("loop")) as w:
        yield w


@pytest.fixture(scope="session")
def scenario(world) -> Scenario:
    first = world.start("first")
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
