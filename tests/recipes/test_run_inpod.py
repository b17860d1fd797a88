"""grpo-run's in-pod half (`python -m grpo_stack.runctl.inpod`) against the REAL local Ray head of the recipe tier:
the run's jobs from Ray's job list, a live log, and `stop` through Ray's job API (the driver is a `sleep`: what
SIGTERM does to a verl driver is the loop tier's). The transport is a local process (tests/runctl/local.py) with
the job.json and storage a head pod would have mounted; grpo-run's exec into the head pod is where this stops.
"""

from __future__ import annotations

import json
import time

from grpo_stack.runctl.status import ClusterView, lines

from tests.recipes.test_run_on_cluster import cluster_state
from tests.runctl.local import LocalExecutor


def test_status_logs_and_stop_through_ray(tmp_path, ray_head):
    from ray.job_submission import JobSubmissionClient

    address, _ = ray_head
    _, spec = cluster_state("qwen3-8b.yaml")
    executor = LocalExecutor(spec, tmp_path / "fsx", tmp_path / "pod", ray_address=address)
    client = JobSubmissionClient(address)
    job_id = f"grpo-verl-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}-{time.time_ns() % 10**6:06d}"
    client.submit_job(entrypoint="echo 'Total training steps: 9'; echo 'step:1 - actor/pg_loss:0.1'; sleep 300",
                      submission_id=job_id, entrypoint_num_cpus=0)
    try:
        deadline = time.monotonic() + 120
        while "step:1 -" not in client.get_job_logs(job_id):
            assert time.monotonic() < deadline, client.get_job_logs(job_id)
            time.sleep(0.5)
        code, out, err = executor.inpod(["status"])
        assert code == 0, err
        text = "\n".join(lines(ClusterView("grpo", "grpo", "cluster", None, None, None, []), json.loads(out)))
        assert f"running (Ray job {job_id})" in text and f"1 of 9, Ray job {job_id}" in text
        code, out, _ = executor.inpod(["logs", job_id])
        assert code == 0 and "step:1 - actor/pg_loss:0.1" in out
    finally:
        code, out, err = executor.inpod(["stop"])
    assert code == 0, err
    assert json.loads(out) == {"stopped": {job_id: "STOPPED"}}
    code, _, err = executor.inpod(["stop"])
    assert code == 2 and "nothing to stop" in err
