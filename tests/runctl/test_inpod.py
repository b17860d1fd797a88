"""The in-pod half of grpo-run (`python -m grpo_stack.runctl.inpod`), run as a local process over a run's storage
laid out as the supervisor and the log store leave it, with no Ray head answering (a restarted head, a dashboard
that is down): status reads the attempts, the tracker and the stored log; logs falls back to the stored copy.
Against a live Ray head (its job list, live logs, stop): tests/recipes/test_run_inpod.py."""

from __future__ import annotations

import json

import pytest
from grpo_stack.render import job_spec, render
from grpo_stack.runctl.status import ClusterView, lines
from grpo_stack.supervise import logstore, records
from grpo_stack.values import load_values_file

from tests.conftest import REPO_ROOT
from tests.runctl.local import LocalExecutor

LOG = ("INFO:2026-01-01 00:00:00:Total training steps: 4\n"
       "(TaskRunner pid=1) step:2 - val-core/gsm8k/reward/mean@1:0.25\n"
       "(TaskRunner pid=1) step:3 - actor/pg_loss:0.1\n")


@pytest.fixture(scope="module")
def spec() -> dict:
    data = load_values_file(REPO_ROOT / "values" / "qwen3-8b.yaml").data
    data["global"]["job"]["resume"] = {"mode": "auto"}
    return job_spec(render(data))


def storage_of_a_resumed_run(root, spec) -> tuple[str, str]:
    ckpt = root / spec["job"]["trainer"]["checkpointDir"]
    (ckpt / "global_step_3" / "actor").mkdir(parents=True)
    (ckpt / "latest_checkpointed_iteration.txt").write_text("3")
    records.append(ckpt, records.Attempt(attempt=1, started=0.0, ended=1.0, start_step=0, last_step=2, checkpoint=2,
                                         end="driver lost at step 2 of 4 (its head, pod or node went away); "
                                             "resubmitting (attempt 2 of 3) from the step-2 checkpoint",
                                         job_id="grpo-verl-20260101-000000-aaaaaa"))
    second = "grpo-verl-20260101-010000-bbbbbb"
    logstore.log_path(ckpt, second).parent.mkdir(parents=True)
    logstore.log_path(ckpt, second).write_text(LOG)
    return str(ckpt), second


def test_status_reads_the_runs_storage_without_ray(tmp_path, spec):
    ckpt, second = storage_of_a_resumed_run(tmp_path / "fsx", spec)
    executor = LocalExecutor(spec, tmp_path / "fsx", tmp_path / "pod")
    code, out, err = executor.inpod(["status"])
    assert code == 0, err
    run = json.loads(out)
    assert "did not answer" in run["rayError"]
    assert run["checkpointDir"] == ckpt
    assert run["steps"] == {"job": second, "first": 3, "last": 3, "total": 4, "from": "stored"}
    assert run["checkpoint"]["kind"] == "resume" and run["checkpoint"]["step"] == 3
    view = ClusterView("grpo", "grpo", "cluster", None, None, None, [])
    text = "\n".join(lines(view, run))
    assert "3 of 4, Ray job " + second in text
    assert "attempt 1: driver lost at step 2 of 4" in text


def test_logs_fall_back_to_the_stored_copy(tmp_path, spec):
    _, second = storage_of_a_resumed_run(tmp_path / "fsx", spec)
    executor = LocalExecutor(spec, tmp_path / "fsx", tmp_path / "pod")
    code, out, _ = executor.inpod(["logs"])
    assert code == 0 and out == LOG
    code, out, _ = executor.inpod(["logs", second, "--stored"])
    assert code == 0 and out == LOG
    code, _, err = executor.inpod(["logs", "grpo-verl-nope"])
    assert code == 2 and "grpo-verl-nope: no log, neither in Ray nor at" in err


def test_stop_without_ray_is_refused(tmp_path, spec):
    executor = LocalExecutor(spec, tmp_path / "fsx", tmp_path / "pod")
    code, _, err = executor.inpod(["stop"])
    assert code == 2 and "did not answer" in err
