"""`grpo-render --job --memory --from-log LOG`: the peak and the lengths a run logged, beside the model's
prediction for the same values, and the lengths to state for the next run of that shape.

Where the check stops: the verl records are written in the shape of verl's `file` tracker (one `{"step", "data"}`
record a line, verl/utils/tracking.py FileLogger) with the metric names verl 0.9.1 logs
(verl/workers/engine_workers.py L219-220, prompt_length/mean and response_length/mean); the miles lines in the
shape of miles' print_memory (miles/utils/memory_utils.py). The loop tier runs verl on a CPU, which logs no GPU
peak, so no record here came from a real GPU."""

from __future__ import annotations

import json

import pytest
from grpo_stack.cli.render import main
from grpo_stack.paths import REPO_ROOT

VALUES = str(REPO_ROOT / "values" / "qwen3-8b.yaml")


def _verl_log(tmp_path, peaks=(51.2, 58.7, 57.9)):
    path = tmp_path / "steps.jsonl"
    path.write_text("".join(json.dumps({"step": i + 1, "data": {
        "training/global_step": i + 1, "perf/max_memory_allocated_gb": peak, "perf/max_memory_reserved_gb": peak + 3,
        "prompt_length/mean": 104.9, "response_length/mean": 288.4 + i}}) + "\n" for i, peak in enumerate(peaks)))
    return path


def test_verl_peak_and_lengths_beside_the_prediction(capsys, tmp_path):
    assert main([VALUES, "--job", "--memory", "--from-log", str(_verl_log(tmp_path))]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("measured (verl"))
    assert "over 3 records): 58.7 GiB; predicted" in line
    assert "reserved by the allocator: 61.7 GiB" in out
    assert "state them as global.job.lengths {meanPrompt: 105, meanResponse: 290}" in out


def test_the_stated_lengths_move_the_prediction_toward_the_run(capsys, tmp_path):
    """Carrying the logged lengths into the values is the documented correction: the prediction for the next run
    of the same shape changes by what the lengths decide, and the log then names what the model took."""
    log = str(_verl_log(tmp_path))
    assert main([VALUES, "--job", "--memory", "--format", "json", "--from-log", log]) == 0
    before = json.loads(capsys.readouterr().out)["measured"]
    stated = tmp_path / "lengths.yaml"
    stated.write_text("global:\n  job:\n    lengths: {meanPrompt: 105, meanResponse: 290}\n")
    assert main(["-f", VALUES, str(stated), "--job", "--memory", "--format", "json", "--from-log", log]) == 0
    after = json.loads(capsys.readouterr().out)["measured"]
    assert before["peak_gib"] == after["peak_gib"] == 58.7
    assert after["predicted_gib"] < before["predicted_gib"]
    assert main(["-f", VALUES, str(stated), "--job", "--memory", "--from-log", log]) == 0
    assert "the model took 395 tokens per sample" in capsys.readouterr().out


def test_miles_device_samples_are_a_floor(capsys, tmp_path):
    log = tmp_path / "miles.log"
    log.write_text("".join(
        f"INFO actor.py:201 [Rank 0] Memory-Usage {where}: {{'gpu': '0', 'total_GB': 139.8, 'free_GB': {free}, "
        f"'used_GB': {round(139.8 - free, 2)}, 'allocated_GB': 40.0, 'reserved_GB': 44.0}}\n"
        for where, free in (("before offload model", 60.3), ("after wake_up model", 20.5))))
    assert main([VALUES, "--job", "--memory", "--from-log", str(log)]) == 0
    out = capsys.readouterr().out
    assert "measured (miles, the largest Memory-Usage used_GB, a device-wide sample: a floor of the peak, over 2 " \
           "records): 119.3 GiB" in out


def test_a_log_without_figures_or_without_memory_is_refused(capsys, tmp_path):
    empty = tmp_path / "empty.log"
    empty.write_text("nothing here\n{\"step\": 1, \"data\": {\"training/global_step\": 1}}\n")
    assert main([VALUES, "--job", "--memory", "--from-log", str(empty)]) == 2
    assert "no verl step record with perf/max_memory_allocated_gb" in capsys.readouterr().err
    assert main([VALUES, "--job", "--from-log", str(empty)]) == 2
    assert "--from-log needs --job --memory" in capsys.readouterr().err
    assert main([VALUES, "--job", "--memory", "--from-log", str(tmp_path / "missing.log")]) == 2
    assert "cannot read" in capsys.readouterr().err


def _driver_log(tmp_path, gib=6.5):
    """vLLM 0.24's two lines about its graph pool as Ray forwards them from each rollout worker (the format strings
    of gpu_model_runner.py L6654-6658 and gpu_worker.py L667-669)."""
    path = tmp_path / "driver.log"
    path.write_text(
        "(vLLMHttpServer pid=812) INFO 12-05 10:01:12 [gpu_model_runner.py:6658] Graph capturing finished in 9 "
        f"secs, took {gib - 0.25:.2f} GiB\n"
        f"(vLLMHttpServer pid=813) INFO 12-05 10:01:12 [gpu_worker.py:667] CUDA graph pool memory: {gib} GiB "
        f"(actual), {gib + 1} GiB (estimated)\n")
    return path


def test_vllms_logged_graph_pool_counts_in_its_share_and_beside_the_trainer(capsys, tmp_path):
    """No rule sizes vLLM's CUDA-graph pool before capture; a run's driver log gives it. Read beside the step file
    (the flag repeats), the largest rank's pool is counted inside vLLM's share (the KV cache shrinks) and, because
    vLLM's sleep keeps it, beside the trainer: the peak grows by the pool. A run with enforce_eager captures none."""
    steps, driver = str(_verl_log(tmp_path)), str(_driver_log(tmp_path))
    assert main([VALUES, "--job", "--memory", "--format", "json", "--from-log", steps, "--from-log", driver]) == 0
    out = json.loads(capsys.readouterr().out)
    measured = out["measured"]
    assert measured["graph_pool_gib"] == 6.5 and measured["peak_gib"] == 58.7
    with_pool = max(p["gib"] + (0 if p["phase"] == "rollout" else 6.5) for p in out["phases"])
    assert measured["peak_with_graph_pool_gib"] == pytest.approx(with_pool, abs=0.02)
    assert measured["peak_with_graph_pool_gib"] > out["peak"]["gib"]
    assert main([VALUES, "--job", "--memory", "--from-log", driver]) == 0
    text = capsys.readouterr().out
    assert "vLLM's CUDA-graph pool: 6.50 GiB logged; counted in its share and asleep beside the trainer" in text
    assert "\nmeasured (" not in text  # the driver log alone carries no peak
    eager = tmp_path / "eager.yaml"
    eager.write_text("global:\n  job:\n    verl:\n      overrides:\n"
                     "        actor_rollout_ref.rollout.enforce_eager: true\n")
    assert main(["-f", VALUES, str(eager), "--job", "--memory", "--from-log", driver]) == 0
    assert "captures none (enforce_eager)" in capsys.readouterr().out
