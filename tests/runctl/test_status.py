"""`grpo-run status` as a user reads it, from attempt records and cluster objects (pure formatting, no cluster)."""

from __future__ import annotations

from dataclasses import asdict

import pytest
from grpo_stack.runctl.status import ClusterView, lines, summary_line
from grpo_stack.supervise.records import Attempt


def raycluster(replicas: int = 2, suspend: bool = False) -> dict:
    return {"metadata": {"name": "grpo-ray"},
            "spec": {"suspend": suspend, "workerGroupSpecs": [{"groupName": "gpu", "replicas": replicas}]}}


def pod(name: str, is_ready: bool = True) -> dict:
    return {"metadata": {"name": name}, "status": {"phase": "Running", "conditions": [
        {"type": "Ready", "status": "True" if is_ready else "False"}]}}


def view(rc=None, workers=2, head=True, rayjob=None) -> ClusterView:
    return ClusterView("grpo", "team-a", "job" if rayjob else "cluster", raycluster() if rc is None else rc, rayjob,
                       pod("head") if head else None, [pod(f"w{i}") for i in range(workers)])


def attempt(n: int, end: str, start: int = 0, last: int | None = None, ckpt: int | None = None) -> dict:
    return asdict(Attempt(attempt=n, started=0.0, ended=1.0, start_step=start, last_step=last, checkpoint=ckpt,
                          end=end, job_id=f"grpo-verl-{n}"))


def run(jobs=(), attempts=(), steps=None, checkpoint=None, retries=2) -> dict:
    return {"framework": "verl", "checkpointDir": "/fsx/checkpoints/r", "rayError": "", "retries": retries,
            "jobs": list(jobs), "attempts": list(attempts),
            "checkpoint": checkpoint or {"kind": "fresh", "step": None, "detail": "no tracker"},
            "steps": steps or {"job": None, "first": None, "last": None, "total": None}}


def shown(text_lines: list[str]) -> dict[str, str]:
    return {k: v.strip() for k, v in (line.split(":", 1) for line in text_lines)}


def test_a_resubmitted_run_in_progress():
    """Attempt 2 runs after attempt 1 was killed: phase, attempt, step of total, checkpoint and the reason."""
    killed = ("driver killed by SIGKILL (exit 137) at step 31 of 120; resubmitting (attempt 2 of 3) from the "
              "step-30 checkpoint")
    text = "\n".join(lines(view(), run(
        jobs=[{"id": "grpo-verl-2", "status": "RUNNING", "training": True}],
        attempts=[attempt(1, killed, last=31, ckpt=30)],
        steps={"job": "grpo-verl-2", "first": 31, "last": 37, "total": 120},
        checkpoint={"kind": "resume", "step": 35, "detail": "resumes from step 35 in /fsx/checkpoints/r"})))
    assert "running (Ray job grpo-verl-2)" in text
    assert "2, running (supervision.retries 2)" in text
    assert "37 of 120, Ray job grpo-verl-2" in text
    assert "step 35 (resumes from step 35 in /fsx/checkpoints/r)" in text
    assert f"attempt 1: {killed}" in text
    assert shown(lines(view(), run()))["cluster"].strip() == "RayCluster grpo-ray: head Ready, 2 of 2 workers Ready"


def test_a_run_that_gave_up_names_why():
    end = "exited 0 at step 2 of 4: 2 step(s) left; retry budget of 0 resubmission(s) spent"
    text = "\n".join(lines(view(), run(jobs=[{"id": "grpo-verl-1", "status": "SUCCEEDED", "training": True}],
                                       attempts=[attempt(1, end, last=2, ckpt=2)], retries=0)))
    assert "phase:" in text and "gave up" in text
    assert f"attempt 1: {end}" in text
    assert "2 (the total is not stated" in text  # no log to read the total from: the record's last step


def test_a_finished_run():
    text = "\n".join(lines(view(), run(attempts=[attempt(1, "finished: step 4 of 4", last=4, ckpt=4)],
                                       steps={"job": "grpo-verl-1", "first": 1, "last": 4, "total": 4})))
    assert "finished" in text.split("phase:")[1].splitlines()[0]
    assert "4 of 4" in text


def test_a_run_whose_supervisor_died_says_to_resubmit():
    """The last record says it was being resubmitted, yet nothing runs: the supervisor went with its head pod."""
    text = "\n".join(lines(view(), run(attempts=[attempt(1, "driver lost at step 3; resubmitting (attempt 2 of "
                                                          "3) from the step-2 checkpoint", last=3, ckpt=2)])))
    assert "nothing runs" in text and "submit again to resume" in text


def test_an_unsupervised_job_shows_rays_status():
    text = "\n".join(lines(view(), run(jobs=[{"id": "grpo-verl-9", "status": "FAILED", "training": True}])))
    assert "failed (Ray job grpo-verl-9, not supervised)" in text
    assert "no attempt recorded" in text


@pytest.mark.parametrize(("rc", "workers", "expected"), [
    (raycluster(replicas=0), 0, "workers scaled to zero (GPUs freed)"),
    (raycluster(suspend=True), 0, "suspended: no head, no workers"),
    (raycluster(replicas=4), 3, "3 of 4 workers Ready"),
])
def test_the_cluster_line(rc, workers, expected):
    assert expected in "\n".join(lines(view(rc=rc, workers=workers), run()))


def test_a_run_that_cannot_be_read_still_shows_the_cluster():
    text = "\n".join(lines(view(head=False), None, "release grpo has no Ray head pod now"))
    assert "head not Ready" in text and "run:" in text and "not readable: release grpo has no Ray head pod" in text


def test_job_mode_shows_the_rayjobs_state():
    rayjob = {"metadata": {"name": "grpo"}, "status": {"jobDeploymentStatus": "Running", "jobStatus": "RUNNING"}}
    text = "\n".join(lines(view(rayjob=rayjob), run()))
    assert "job mode" in text and "RayJob grpo: deployment Running, job RUNNING" in text


def test_the_list_line_reads_the_operators_status():
    rc = {**raycluster(replicas=4), "status": {"state": "ready", "readyWorkerReplicas": 3}}
    assert summary_line(rc) == "ready, 3 of 4 workers Ready"
    assert summary_line(raycluster(replicas=0)) == "not reconciled yet, workers scaled to zero (GPUs freed)"
    assert summary_line(raycluster(suspend=True)) == "suspended: no head, no workers"
