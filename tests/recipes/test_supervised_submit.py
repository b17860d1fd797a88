"""`run-on-cluster.sh --follow` supervises the run (global.job.supervision): through the kubectl shim (not a
cluster) and the in-pod submit to the REAL local Ray head of test_run_on_cluster.py, whose driver is a stand-in
trainer (supervised_trainer.py) writing verl's checkpoint layout and console step lines. Each resubmission goes
through the submit's own resume gate; the attempts land on the run's storage.

Where the check stops: the driver is a stand-in; the real verl trainer killed and resumed under the same code is
the loop tier's (tests/loop). A lost head pod ends the supervisor with it (it runs in the head pod).
"""

from __future__ import annotations

import json

from grpo_stack.supervise import records

from tests.recipes.test_run_on_cluster import cluster_state, run_recipe


def supervised(tmp_path, ray_head, behaviours: list[str], retries: int = 2):
    address, env = ray_head
    storage = tmp_path / "fsx"
    state, spec = cluster_state("qwen3-8b.yaml", storage=storage, job={
        "resume": {"mode": "auto"}, "supervision": {"retries": retries}, "trainer.experiment": "supervised"})
    ckpt = storage / spec["job"]["trainer"]["checkpointDir"]
    ckpt.parent.mkdir(parents=True, exist_ok=True)
    (ckpt.parent / "behaviours").write_text("\n".join(behaviours) + "\n")
    proc, _ = run_recipe(tmp_path, state, spec, "--follow", env={**env, "RAY_ADDRESS": address})
    return proc, records.read(ckpt), ckpt


def test_a_killed_driver_is_resubmitted_and_resumes_at_the_next_step(tmp_path, ray_head):
    proc, attempts, ckpt = supervised(tmp_path, ray_head, ["kill@3", "ok"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [(a.start_step, a.last_step, a.checkpoint) for a in attempts] == [(0, 2, 2), (2, 4, 4)]
    assert "(attempt 2)" in proc.stdout and "attempt 2: finished: step 4 of 4" in proc.stdout
    assert "attempt 1: driver killed by SIGKILL (exit 137) at step 2 of 4; resubmitting" in proc.stdout
    assert (ckpt / "latest_checkpointed_iteration.txt").read_text() == "4"


def test_an_early_exit_0_is_not_success(tmp_path, ray_head):
    proc, attempts, _ = supervised(tmp_path, ray_head, ["exit0@2"], retries=0)
    assert proc.returncode == 1, proc.stdout
    assert "gave up: exited 0 at step 2 of 4: 2 step(s) left; retry budget of 0 resubmission(s) spent" in proc.stderr
    assert len(attempts) == 1


def test_the_driver_exit_code_is_the_scripts_when_the_budget_is_spent(tmp_path, ray_head):
    proc, attempts, _ = supervised(tmp_path, ray_head, ["fail@2", "fail@3"], retries=1)
    assert proc.returncode == 7, proc.stdout + proc.stderr
    assert [a.attempt for a in attempts] == [1, 2] and "retry budget of 1" in attempts[-1].end


def test_a_resubmission_that_starts_over_is_stopped(tmp_path, ray_head):
    proc, attempts, ckpt = supervised(tmp_path, ray_head, ["kill@3", "restart"])
    assert proc.returncode == 1
    assert "logged step 1 first (expected 3)" in proc.stderr
    assert json.loads(records.path(ckpt).read_text().splitlines()[-1])["attempt"] == 2 == len(attempts)
