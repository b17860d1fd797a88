"""The step metrics (grpo_stack.stepmetrics): verl's `file` tracker lines read into the metrics the dashboards
and alerts name, served over HTTP on loopback and parsed by prometheus_client's text parser (the format
Prometheus scrapes). Where the check stops: the lines here are written in verl's FileLogger format by hand; the
loop tier (tests/loop) reads the ones verl 0.9.1 itself writes during a real run and scrapes the real exporter."""

from __future__ import annotations

import json
import urllib.request

from grpo_stack.stepmetrics.exporter import StepMetrics, serve
from grpo_stack.stepmetrics.verl_steps import StepFile, parse
from prometheus_client.parser import text_string_to_metric_families

STEP = {"training/global_step": 3, "training/epoch": 0, "timing_s/step": 8.5, "timing_s/gen": 3.25,
        "timing_s/reward": 0.5, "timing_s/old_log_prob": 1.0, "timing_s/adv": 0.01, "timing_s/update_actor": 2.0,
        "timing_s/update_weights": 0.75, "timing_s/save_checkpoint": 0.9, "critic/score/mean": 0.4,
        "response_length/mean": 21.5, "perf/total_num_tokens": 340, "perf/time_per_step": 8.5,
        "actor/pg_loss": -0.01}


def line(step: int, data: dict) -> str:
    return json.dumps({"step": step, "data": data}) + "\n"


def samples(text: str) -> dict[tuple[str, tuple], float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def test_a_step_record_is_read_with_verls_names():
    rec = parse(line(3, STEP))
    assert rec.step == 3 and rec.seconds == 8.5 and rec.reward_mean == 0.4 and rec.response_length_mean == 21.5
    assert rec.phases == {"gen": 3.25, "reward": 0.5, "old_log_prob": 1.0, "adv": 0.01, "update_actor": 2.0,
                          "update_weights": 0.75, "save_checkpoint": 0.9}
    assert rec.tokens_per_second == 40.0


def test_validation_records_and_torn_lines_are_not_steps():
    assert parse(line(0, {"val-core/grpo-loop/spell/reward/mean@1": 0.2})) is None
    assert parse('{"step": 1, "data": {"training/glo') is None


def test_the_step_file_is_followed_across_appends_and_a_restart(tmp_path):
    path = tmp_path / "steps.jsonl"
    follow = StepFile(path)
    assert follow.new() == []
    path.write_text(line(0, {"val-core/x": 1.0}) + line(1, STEP) + line(2, STEP)[:20])
    assert [r.step for r in follow.new()] == [1]
    with path.open("a") as fh:
        fh.write(line(2, STEP)[20:])
    assert [r.step for r in follow.new()] == [2]
    path.write_text(line(3, STEP))  # verl opens the file "wb" at the next attempt's start
    assert [r.step for r in follow.new()] == [3]


def test_the_metrics_are_served_and_parse_as_prometheus_text():
    metrics = StepMetrics("grpo")
    metrics.new_attempt("grpo-verl-20260101-000000-abcdef")
    server = serve(metrics, 0, host="127.0.0.1")
    url = f"http://127.0.0.1:{server.server_address[1]}/metrics"
    try:
        before = samples(urllib.request.urlopen(url, timeout=10).read().decode())
        labels = (("job", "grpo-verl-20260101-000000-abcdef"), ("release", "grpo"))
        assert before == {("grpo_stall", labels): 0.0}
        metrics.update(parse(line(3, STEP)), 1_700_000_000.0)
        metrics.set_stall(True)
        with urllib.request.urlopen(url, timeout=10) as resp:
            assert resp.headers["Content-Type"].startswith("text/plain; version=0.0.4")
            after = samples(resp.read().decode())
    finally:
        server.shutdown()
    assert after[("grpo_step_number", labels)] == 3.0
    assert after[("grpo_step_seconds", labels)] == 8.5
    assert after[("grpo_step_phase_seconds", (*labels[:1], ("phase", "gen"), labels[1]))] == 3.25
    assert after[("grpo_step_reward_mean", labels)] == 0.4
    assert after[("grpo_step_response_length_mean", labels)] == 21.5
    assert after[("grpo_step_tokens_per_second", labels)] == 40.0
    assert after[("grpo_step_last_timestamp_seconds", labels)] == 1_700_000_000.0
    assert after[("grpo_stall", labels)] == 1.0
    phases = {dict(k[1])["phase"] for k in after if k[0] == "grpo_step_phase_seconds"}
    assert phases == {"gen", "reward", "old_log_prob", "adv", "update_actor", "update_weights", "save_checkpoint"}
