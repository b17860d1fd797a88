"""The in-pod submit refuses a second run while one of its jobs runs on the release's Ray cluster, naming it: against
the REAL local Ray head of the recipe tier (its job list, its statuses), through the kubectl shim and
run-on-cluster.sh. The running job is a `sleep` under a submission id of the submit's own form; a job someone else
submitted (another id) does not count."""

from __future__ import annotations

import time

from tests.recipes.test_run_on_cluster import cluster_state, printed_job_id, run_recipe, wait_for_job


def _running(client, job_id: str) -> None:
    deadline = time.monotonic() + 120
    while str(client.get_job_status(job_id).value) != "RUNNING":
        assert time.monotonic() < deadline, f"{job_id} never ran"
        time.sleep(0.5)


def test_a_second_run_is_refused_naming_the_first(tmp_path, ray_head):
    from ray.job_submission import JobSubmissionClient

    address, env = ray_head
    client = JobSubmissionClient(address)
    busy, foreign = "grpo-verl-20260101-000000-abcdef", f"notebook-{time.time_ns()}"
    client.submit_job(entrypoint="sleep 300", submission_id=busy, entrypoint_num_cpus=0)
    client.submit_job(entrypoint="sleep 300", submission_id=foreign, entrypoint_num_cpus=0)
    state, spec = cluster_state("qwen3-8b.yaml")
    for sub in ("busy", "free"):
        (tmp_path / sub).mkdir()
    try:
        _running(client, busy)
        proc, _ = run_recipe(tmp_path / "busy", state, spec, env={**env, "RAY_ADDRESS": address})
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert f"already runs {busy} (RUNNING): one run per release" in proc.stderr
        assert foreign not in proc.stderr
        assert "Ray job id" not in proc.stdout
    finally:
        client.stop_job(busy)
    wait_for_job(address, env, busy)
    try:  # the other job is not ours: with ours stopped the run goes through
        proc, _ = run_recipe(tmp_path / "free", state, spec, env={**env, "RAY_ADDRESS": address})
        assert proc.returncode == 0, proc.stderr
        assert wait_for_job(address, env, printed_job_id(proc.stdout))[0] == "SUCCEEDED"
    finally:
        client.stop_job(foreign)
