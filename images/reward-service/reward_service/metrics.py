"""Prometheus metrics, kept in the service's own registry so the app and the metrics listener expose the same set."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, PlatformCollector, ProcessCollector

# Verdicts decided by the input (HTTP 200) and service faults (HTTP 5xx), as they appear in the `status` label.
INPUT_STATUSES = ("ok", "wrong", "no_label", "no_answer", "timeout", "hard_timeout", "worker_died")
FAULT_STATUSES = ("error", "overloaded")

# Scores take about 1-50 ms, queueing can take seconds, and the hard kill bounds a single score.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 30, 60, 120)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        ProcessCollector(registry=self.registry)
        PlatformCollector(registry=self.registry)
        self.scores = Counter(
            "reward_scores", "Scored samples by outcome status.", ["status"], registry=self.registry
        )
        self.latency = Histogram(
            "reward_score_latency_seconds", "Time from admission to reply, per sample, queueing included.",
            buckets=LATENCY_BUCKETS, registry=self.registry,
        )
        self.pool_restarts = Counter(
            "reward_pool_restarts", "Worker processes replaced after a hard timeout or a worker death.",
            ["reason"], registry=self.registry,
        )
        self.queue_depth = Gauge(
            "reward_queue_depth", "Samples admitted and waiting to be handed to the worker pool.",
            registry=self.registry,
        )
        self.running = Gauge("reward_running", "Samples handed to the worker pool (running or next in line).",
                             registry=self.registry)
        self.ready = Gauge("reward_ready", "1 when the last readiness check passed.", registry=self.registry)
        for status in INPUT_STATUSES + FAULT_STATUSES:
            self.scores.labels(status)  # export zeros, so rate() works from the first scrape
        for reason in ("hard_timeout", "worker_died"):
            self.pool_restarts.labels(reason)
