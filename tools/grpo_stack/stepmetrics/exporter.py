"""The step metrics in Prometheus's text exposition format, served on HTTP /metrics.

Every metric is a gauge labelled `release` and `job` (the Ray job id of the attempt that logged the step):

    grpo_step_number                      the last step logged
    grpo_step_seconds                     its time (verl timing_s/step)
    grpo_step_phase_seconds{phase=...}    each phase's time in it (verl timing_s/<phase>)
    grpo_step_reward_mean                 the reward function's mean score (verl critic/score/mean)
    grpo_step_response_length_mean        mean response length in tokens (verl response_length/mean)
    grpo_step_tokens_per_second           prompt + response tokens of the step / its time, whole job
    grpo_step_last_timestamp_seconds      unix time the step's record was read
    grpo_stall                            1 while the stall detector reports a stall, else 0
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from .verl_steps import StepRecord

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
HELP = {
    "grpo_step_number": "The last training step the run logged.",
    "grpo_step_seconds": "Time of the last step (verl timing_s/step).",
    "grpo_step_phase_seconds": "Time of each phase of the last step (verl timing_s/<phase>).",
    "grpo_step_reward_mean": "Mean reward score of the last step's samples (verl critic/score/mean).",
    "grpo_step_response_length_mean": "Mean response length of the last step in tokens (verl response_length/mean).",
    "grpo_step_tokens_per_second": "Prompt and response tokens of the last step over its time, whole job.",
    "grpo_step_last_timestamp_seconds": "Unix time the last step's record was read.",
    "grpo_stall": "1 while the stall detector reports a stall, else 0.",
}


class StepMetrics:
    """The latest step of the current attempt, and the stall flag; thread-safe."""

    def __init__(self, release: str):
        self.release = release
        self.job = ""
        self.last: StepRecord | None = None
        self.read_at: float | None = None
        self.stalled = False
        self._lock = threading.Lock()

    def new_attempt(self, job: str) -> None:
        with self._lock:
            self.job, self.last, self.read_at, self.stalled = job, None, None, False

    def update(self, record: StepRecord, read_at: float) -> None:
        with self._lock:
            self.last, self.read_at = record, read_at

    def set_stall(self, stalled: bool) -> None:
        with self._lock:
            self.stalled = stalled

    def render(self) -> str:
        with self._lock:
            last, read_at, stalled, job = self.last, self.read_at, self.stalled, self.job
        labels = {"release": self.release, "job": job}
        samples: list[tuple[str, dict[str, str], float | None]] = [("grpo_stall", {}, 1.0 if stalled else 0.0)]
        if last is not None:
            samples += [("grpo_step_number", {}, float(last.step)), ("grpo_step_seconds", {}, last.seconds)]
            samples += [("grpo_step_phase_seconds", {"phase": p}, v) for p, v in sorted(last.phases.items())]
            samples += [("grpo_step_reward_mean", {}, last.reward_mean),
                        ("grpo_step_response_length_mean", {}, last.response_length_mean),
                        ("grpo_step_tokens_per_second", {}, last.tokens_per_second),
                        ("grpo_step_last_timestamp_seconds", {}, read_at)]
        out, seen = [], set()
        for name, extra, value in samples:
            if value is None:
                continue
            if name not in seen:
                seen.add(name)
                out += [f"# HELP {name} {HELP[name]}", f"# TYPE {name} gauge"]
            pairs = ",".join(f'{k}="{_escape(v)}"' for k, v in {**labels, **extra}.items())
            out.append(f"{name}{{{pairs}}} {value!r}")
        return "\n".join(out) + "\n"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def serve(metrics: StepMetrics, port: int, host: str = "0.0.0.0") -> ThreadingHTTPServer:
    """Serve /metrics on host:port from a daemon thread; `shutdown()` the returned server to stop."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            if self.path.split("?", 1)[0] != "/metrics":
                self.send_error(404, "only /metrics")
                return
            body = metrics.render().encode()
            self.send_response(200)
            self.send_header("Content-Type", CONTENT_TYPE)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):  # a scrape every few seconds is not worth a log line
            pass

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="grpo-step-metrics", daemon=True).start()
    return server
