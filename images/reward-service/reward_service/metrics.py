"""Prometheus metrics, kept in the service's own registry so the app and the metrics listener expose the same set."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, PlatformCollector, ProcessCollector

# Verdicts decided by the input (HTTP 200) and service faults (HTTP 5xx), as they appear in the `status` label.
INPUT_STATUSES = ("ok", "wrong", "no_label", "no_answer", "timeout", "hard_timeout", "worker_died", "screened",
                  "bad_input", "bad_label")
FAULT_STATUSES = ("error", "overloaded", "sandbox_unavailable", "unknown_source")
# Outcomes of single /run_code calls (before retries): the first two are verdicts, the rest sandbox faults.
SANDBOX_OUTCOMES = ("success", "failed", "sandbox_error", "http_5xx", "unreachable", "timeout", "rejected",
                    "bad_reply")

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
        self.workers_alive = Gauge("reward_workers_alive", "Worker processes started and serving.",
                                   registry=self.registry)
        self.sandbox_calls = Counter("reward_sandbox_calls", "SandboxFusion /run_code calls by outcome, retries "
                                     "included.", ["outcome"], registry=self.registry)
        self.abandoned = Counter("reward_abandoned", "Samples whose client went away before the reply; their work "
                                 "was dropped (queued), stopped (running) or cancelled (waiting for the sandbox).",
                                 registry=self.registry)
        self.ready = Gauge("reward_ready", "1 when the last readiness check passed.", registry=self.registry)
        # Every status exported from zero, so rate() works from the first scrape; the children are kept, since
        # labels() takes a lock and builds a key on every call.
        self._score_counters = {status: self.scores.labels(status) for status in INPUT_STATUSES + FAULT_STATUSES}
        for outcome in SANDBOX_OUTCOMES:
            self.sandbox_calls.labels(outcome)
        for reason in ("hard_timeout", "worker_died", "start_failed", "abandoned"):
            self.pool_restarts.labels(reason)

    def count_score(self, status: str, samples: int = 1) -> None:
        counter = self._score_counters.get(status)
        (counter if counter is not None else self.scores.labels(status)).inc(samples)
