"""Every metric the chart's dashboards and alerts name, with where it is seen emitted.

Sources:
  reward-service  images/reward-service; tests/monitoring scrapes a running service's /metrics over loopback
  vllm            vLLM 0.24.0 (the chart's server image), vllm/v1/metrics/loggers.py; tests/monitoring reads the
                  loop tier's installed copy of that release
  dcgm            NVIDIA dcgm-exporter's default counters, recorded/dcgm-exporter-default-counters.csv
                  (SOURCES.json beside it); no GPU runs here
  step-exporter   the training step exporter (grpo_step_*, grpo_stall: grpo_stack.stepmetrics), scraped in a real
                  verl run by the loop tier
"""

from __future__ import annotations

from pathlib import Path

from ..stepmetrics.exporter import HELP as STEP_HELP

RECORDED_DIR = Path(__file__).resolve().parent / "recorded"
DCGM_COUNTERS = RECORDED_DIR / "dcgm-exporter-default-counters.csv"

# Reward answers by `status` label (images/reward-service/reward_service/metrics.py): HTTP 5xx faults, timeouts.
REWARD_5XX = ("error", "overloaded", "sandbox_unavailable")
REWARD_TIMEOUT = ("timeout", "hard_timeout")
# /run_code outcomes that mean the sandbox did not answer a call in time or at all (`outcome` label).
SANDBOX_FAULTS = ("timeout", "rejected", "http_5xx", "unreachable")

SOURCES: dict[str, tuple[str, ...]] = {
    "reward-service": (
        "reward_scores_total", "reward_score_latency_seconds_bucket", "reward_queue_depth", "reward_running",
        "reward_workers_alive", "reward_sandbox_calls_total", "reward_pool_restarts_total",
    ),
    "vllm": (
        "vllm:generation_tokens_total", "vllm:prompt_tokens_total", "vllm:num_requests_running",
        "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc", "vllm:request_queue_time_seconds_bucket",
    ),
    "dcgm": ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_POWER_USAGE"),
    # What grpo_stack.stepmetrics serves (its HELP table, one source); tests/loop scrapes each of them in a real
    # verl run (test_step_metrics_are_scraped_during_the_run).
    "step-exporter": tuple(STEP_HELP),
}


def source_of(name: str) -> str | None:
    return next((src for src, names in SOURCES.items() if name in names), None)


def family(name: str) -> str:
    """The name a client library defines for an exposed series: counters gain `_total`, histograms `_bucket`."""
    for suffix in ("_total", "_bucket", "_sum", "_count"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def dcgm_fields(path: Path = DCGM_COUNTERS) -> set[str]:
    """The fields dcgm-exporter exports by default: one metric per uncommented CSV line, named as the field."""
    out = set()
    for line in path.read_text().splitlines():
        field = line.split(",", 1)[0].strip()
        if field and not field.startswith("#"):
            out.add(field)
    return out
