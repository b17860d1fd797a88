"""Grafana dashboards by GRPO phase: rollout, reward, training, GPU.

Each dashboard is a list of panels, each panel a title, a unit and its queries. Queries use two Grafana
variables, `$namespace` (the release namespace, picked on the dashboard) and `$__rate_interval`; Grafana replaces
both before Prometheus sees the query, and so does `parseable()` for the parser checks.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..stepmetrics.phases import CHECKPOINT, WEIGHT_SYNC

NS = 'namespace="$namespace"'
RATE = "[$__rate_interval]"
# What Grafana puts in place of the variables; used to hand the parser what Prometheus would receive.
SUBSTITUTES = {"$namespace": "grpo", "$__rate_interval": "2m"}


@dataclass(frozen=True)
class Query:
    expr: str
    legend: str = ""


@dataclass(frozen=True)
class Panel:
    title: str
    unit: str
    queries: tuple[Query, ...]
    description: str = ""
    stacked: bool = False


@dataclass(frozen=True)
class Dashboard:
    uid: str
    title: str
    description: str
    panels: tuple[Panel, ...] = field(default_factory=tuple)

    @property
    def file_name(self) -> str:
        return f"{self.uid}.json"


def _quantiles(metric: str, selector: str) -> tuple[Query, ...]:
    return tuple(Query(f"histogram_quantile({q}, sum by (le) (rate({metric}{{{selector}}}{RATE})))", f"p{int(q * 100)}")
                 for q in (0.5, 0.9, 0.99))


ROLLOUT = Dashboard("grpo-rollout", "GRPO / Rollout", "Generation: vLLM's token throughput, request queue and "
                    "KV cache, per pod that serves vLLM metrics (the eval server; the rollout's engines where they "
                    "export them).", (
    Panel("Generated tokens/s", "short", (
        Query(f"sum by (pod) (rate(vllm:generation_tokens_total{{{NS}}}{RATE}))", "{{pod}}"),)),
    Panel("Prompt tokens/s", "short", (
        Query(f"sum by (pod) (rate(vllm:prompt_tokens_total{{{NS}}}{RATE}))", "{{pod}}"),)),
    Panel("Requests running and waiting", "short", (
        Query(f"sum by (pod) (vllm:num_requests_running{{{NS}}})", "running {{pod}}"),
        Query(f"sum by (pod) (vllm:num_requests_waiting{{{NS}}})", "waiting {{pod}}"))),
    Panel("KV cache used", "percentunit", (
        Query(f"max by (pod) (vllm:kv_cache_usage_perc{{{NS}}})", "{{pod}}"),)),
    Panel("Queue time", "s", _quantiles("vllm:request_queue_time_seconds_bucket", NS)),
))

REWARD_SEL = f'{NS}, job=~".*-reward-service"'
REWARD = Dashboard("grpo-reward", "GRPO / Reward", "The reward service: answers by status (ok, wrong, no_answer, "
                   "timeouts, 5xx faults), latency, queue and the sandbox calls of code routes.", (
    Panel("Answers/s by status", "reqps", (
        Query(f"sum by (status) (rate(reward_scores_total{{{REWARD_SEL}}}{RATE}))", "{{status}}"),), stacked=True),
    Panel("Status mix", "percentunit", (
        Query(f"sum by (status) (rate(reward_scores_total{{{REWARD_SEL}}}{RATE})) / ignoring (status) group_left "
              f"sum (rate(reward_scores_total{{{REWARD_SEL}}}{RATE}))", "{{status}}"),),
          "Share of each status: no_answer (nothing to score), timeout and hard_timeout, error, overloaded and "
          "sandbox_unavailable (HTTP 5xx).", stacked=True),
    Panel("Latency", "s", _quantiles("reward_score_latency_seconds_bucket", REWARD_SEL),
          "Admission to reply, queueing included."),
    Panel("Queue and workers", "short", (
        Query(f"sum (reward_queue_depth{{{REWARD_SEL}}})", "queued"),
        Query(f"sum (reward_running{{{REWARD_SEL}}})", "running"),
        Query(f"sum (reward_workers_alive{{{REWARD_SEL}}})", "workers alive"))),
    Panel("Worker restarts/s", "short", (
        Query(f"sum by (reason) (rate(reward_pool_restarts_total{{{REWARD_SEL}}}{RATE}))", "{{reason}}"),)),
    Panel("Sandbox calls/s by outcome", "reqps", (
        Query(f"sum by (outcome) (rate(reward_sandbox_calls_total{{{REWARD_SEL}}}{RATE}))", "{{outcome}}"),),
          "SandboxFusion /run_code calls of code routes, retries included; timeout and rejected mean saturation.",
          stacked=True),
))

TRAINING = Dashboard("grpo-training", "GRPO / Training", "The trainer's steps: step time and each phase's share "
                     "(generate, reward, log-probs, update, weight sync, checkpoint), reward, length, throughput "
                     "and the stall detector's verdict.", (
    Panel("Step", "short", (Query(f"max (grpo_step_number{{{NS}}})", "step"),)),
    Panel("Step time by phase", "s", (
        Query(f"max by (phase) (grpo_step_phase_seconds{{{NS}}})", "{{phase}}"),), stacked=True),
    Panel("Step time", "s", (Query(f"max (grpo_step_seconds{{{NS}}})", "step"),)),
    Panel("Weight sync and checkpoint", "s", (
        Query(f'max by (phase) (grpo_step_phase_seconds{{{NS}, phase=~"{"|".join(WEIGHT_SYNC + CHECKPOINT)}"}})',
              "{{phase}}"),),
          "The rollout weight update and the checkpoint save, by verl's and miles' timer names."),
    Panel("Reward", "short", (Query(f"max (grpo_step_reward_mean{{{NS}}})", "mean"),)),
    Panel("Response length", "short", (Query(f"max (grpo_step_response_length_mean{{{NS}}})", "mean"),)),
    Panel("Tokens/s", "short", (Query(f"max (grpo_step_tokens_per_second{{{NS}}})", "tokens/s"),)),
    Panel("Since the last step", "s", (
        Query(f"time() - max (grpo_step_last_timestamp_seconds{{{NS}}})", "seconds"),
        Query(f"max (grpo_stall{{{NS}}})", "stalled"))),
))

GPU_SEL = NS
GPU = Dashboard("grpo-gpu", "GRPO / GPU", "DCGM exporter: utilisation, memory and power of the GPUs of the "
                "namespace's pods (needs the exporter's pod mapping).", (
    Panel("GPU utilisation", "percent", (
        Query(f"avg by (pod) (DCGM_FI_DEV_GPU_UTIL{{{GPU_SEL}}})", "{{pod}}"),)),
    Panel("GPU memory used", "decmbytes", (
        Query(f"sum by (pod) (DCGM_FI_DEV_FB_USED{{{GPU_SEL}}})", "{{pod}}"),)),
    Panel("GPU memory used share", "percentunit", (
        Query(f"sum by (pod) (DCGM_FI_DEV_FB_USED{{{GPU_SEL}}}) / (sum by (pod) (DCGM_FI_DEV_FB_USED{{{GPU_SEL}}}) "
              f"+ sum by (pod) (DCGM_FI_DEV_FB_FREE{{{GPU_SEL}}}))", "{{pod}}"),)),
    Panel("Power", "watt", (Query(f"sum by (pod) (DCGM_FI_DEV_POWER_USAGE{{{GPU_SEL}}})", "{{pod}}"),)),
))

DASHBOARDS = (ROLLOUT, REWARD, TRAINING, GPU)


def parseable(expr: str) -> str:
    """The query as Prometheus receives it from Grafana."""
    for var, value in SUBSTITUTES.items():
        expr = expr.replace(var, value)
    return expr


def queries() -> list[tuple[str, str, str]]:
    """(dashboard uid, panel title, expression) of every query."""
    return [(d.uid, p.title, q.expr) for d in DASHBOARDS for p in d.panels for q in p.queries]


def _panel(panel: Panel, index: int) -> dict:
    return {
        "id": index + 1, "type": "timeseries", "title": panel.title, "description": panel.description,
        "datasource": {"type": "prometheus", "uid": "${datasource}"},
        "gridPos": {"h": 8, "w": 12, "x": 12 * (index % 2), "y": 8 * (index // 2)},
        "fieldConfig": {"defaults": {"unit": panel.unit, "custom": {
            "stacking": {"mode": "normal" if panel.stacked else "none"}}}, "overrides": []},
        "targets": [{"refId": chr(ord("A") + i), "expr": q.expr, "legendFormat": q.legend,
                     "datasource": {"type": "prometheus", "uid": "${datasource}"}}
                    for i, q in enumerate(panel.queries)],
    }


def dashboard_json(dashboard: Dashboard) -> str:
    model = {
        "uid": dashboard.uid, "title": dashboard.title, "description": dashboard.description,
        "tags": ["grpo-stack"], "timezone": "browser", "schemaVersion": 39, "version": 1, "editable": True,
        "time": {"from": "now-6h", "to": "now"}, "refresh": "30s",
        "templating": {"list": [
            {"name": "datasource", "label": "Prometheus", "type": "datasource", "query": "prometheus"},
            {"name": "namespace", "label": "Namespace", "type": "query",
             "datasource": {"type": "prometheus", "uid": "${datasource}"},
             "query": {"query": "label_values(up, namespace)", "refId": "namespace"},
             "definition": "label_values(up, namespace)", "refresh": 2},
        ]},
        "panels": [_panel(p, i) for i, p in enumerate(dashboard.panels)],
    }
    return json.dumps(model, indent=2, sort_keys=True) + "\n"
