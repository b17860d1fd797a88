"""miles' step metrics through miles' own Prometheus backend (docs/observability.md).

With global.job.supervision.stepMetricsPort the builder emits `--use-prometheus --prometheus-port
--prometheus-run-name`; miles' own parser reads them; miles' own tracking starts its collector actor on that port in
a local Ray and is fed by the calls miles' training loop makes (its timers, log_train_step, log_perf_data_raw); the
supervisor's reader (grpo_stack.stepmetrics.miles_steps) turns each page into the step the exporter serves as
grpo_step_*.

Where the check stops: the numbers are timed sleeps in the worker, not a training step (miles cannot train on a CPU:
docs/miles.md), and miles' log_rollout_data (rewards, lengths) needs Megatron's process groups, so the reward and
length gauges are not produced here; the supervisor finding the driver's node is the recipes tier's
(tests/recipes/test_driver_address.py).
"""

from __future__ import annotations

import time

import pytest
from grpo_stack.stepmetrics.exporter import StepMetrics
from grpo_stack.stepmetrics.miles_steps import CollectorSteps, gauges, record

from .cases import STEP_METRICS_CASE, STEP_METRICS_PORT

pytestmark = pytest.mark.miles


def test_the_port_turns_on_miles_own_collector(miles_runs):
    case, result, _, _ = miles_runs[STEP_METRICS_CASE]
    assert result["ok"], result
    args = result["args"]
    assert args["use_prometheus"] is True and args["prometheus_port"] == STEP_METRICS_PORT
    assert args["prometheus_run_name"] == case.job["trainer"]["experiment"]
    _, plain, _, _ = miles_runs["miles-qwen3-4b"]
    assert not plain["args"]["use_prometheus"]  # no port: no collector


def test_each_rollout_miles_logs_is_one_step_with_its_phases(miles_runs):
    _, result, _, _ = miles_runs[STEP_METRICS_CASE]
    records = [record(gauges(page)) for page in result["metrics_pages"]]
    assert [r.step for r in records] == [0, 1, 2]
    for r in records:
        # miles' timers by name, and its step time: the wait for the rollout plus the training
        assert {"train_wait", "train", "log_probs", "actor_train"} <= set(r.phases), r.phases
        assert r.seconds == pytest.approx(r.phases["train_wait"] + r.phases["train"])
        assert r.phases["train"] >= r.phases["actor_train"] + r.phases["log_probs"] - 0.05
    assert "miles_metric_train_grad_norm" in gauges(result["metrics_pages"][-1])  # log_train_step's numbers too


def test_the_supervisor_follows_the_collector_and_serves_grpo_steps(miles_runs):
    _, result, _, _ = miles_runs[STEP_METRICS_CASE]
    # not up yet, 3 rollouts (a moved step is read twice), no news
    pages = iter([None, *(p for page in result["metrics_pages"] for p in (page, page)), result["metrics_pages"][-1]])
    source = CollectorSteps(lambda: "http://driver-node:9108/metrics", read=lambda _url: next(pages))
    seen = [r for _ in range(5) for r in source.new()]
    assert [r.step for r in seen] == [0, 1, 2]
    metrics = StepMetrics("grpo")
    metrics.new_attempt("raysubmit_1")
    metrics.update(seen[-1], time.time())
    text = metrics.render()
    assert 'grpo_step_number{release="grpo",job="raysubmit_1"} 2.0' in text
    assert 'grpo_step_phase_seconds{release="grpo",job="raysubmit_1",phase="actor_train"}' in text
