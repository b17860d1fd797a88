"""A followed run under supervision (`submit --follow`): each attempt is a Ray job on this head, started only
after the resume gate passes again, its logs streamed and copied to the run's storage (supervise/logstore.py:
<checkpointDir>/grpo-stack/logs/<job_id>/driver.log); after it ends the supervisor decides (grpo_stack.supervise):
done, resubmit (up to global.job.supervision.retries times), or give up with the reason, which is also recorded
on the run's storage (<checkpointDir>/grpo-stack/attempts.jsonl).

While a verl attempt runs, its trainer's own `file` tracker writes one JSON line a step to
<checkpointDir>/grpo-stack/logs/<job_id>/steps.jsonl (VERL_FILE_LOGGER_PATH in the job's runtime env); the attempt's
watch (supervise/watch.py) reads it into the step metrics (served on global.job.supervision.stepMetricsPort) and
the stall detector (global.job.supervision.stall). A miles attempt's steps are read from miles' own Prometheus
collector on the driver's node (`--use-prometheus` on the step-metrics port: stepmetrics/miles_steps.py). With
global.job.supervision.events, each attempt's end, the stall reports and the run's outcome are also Kubernetes
Events on the head pod (supervise/events.py).

Where it stops: the supervisor runs in the submit's own process in the Ray head pod, so it outlives a lost driver,
worker or GPU node, not a lost head pod (the RayJob mode, docs/day-2.md, is the place for that).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..stepmetrics.exporter import StepMetrics, serve
from ..stepmetrics.miles_steps import CollectorSteps
from ..supervise import logstore
from ..supervise.decide import DONE, Decision, Policy
from ..supervise.events import EventSink
from ..supervise.gpuidle import IdleClock, dashboard_reader
from ..supervise.run import Refused, Stalled, Stopped, supervise
from ..supervise.stall import REPORT, StallPolicy
from ..supervise.watch import AttemptWatch
from .rayjobs import Ray, new_job_id
from .resume import ResumeState
from .spec import Spec

STEP_FILE_ENV = "VERL_FILE_LOGGER_PATH"  # verl/utils/tracking.py FileLogger


def report(line: str) -> None:
    print(f"submit: {line}", flush=True)


def step_file_env(framework: str, checkpoint_dir: str, job_id: str) -> dict[str, str]:
    """The runtime env that points verl's `file` tracker at the attempt's step file on the run's storage."""
    if framework != "verl":
        return {}
    path = logstore.steps_path(checkpoint_dir, job_id)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # verl would fail to open a file there: let it write into its working directory
        report(f"step file: cannot create {path.parent} ({exc.strerror or exc}); no step metrics for {job_id}")
        return {}
    return {STEP_FILE_ENV: str(path)}


@dataclass
class Watching:
    """What watches each attempt: the stall policy, the step metrics (served or not) and the Event sink."""

    policy: StallPolicy
    metrics: StepMetrics
    port: int | None = None
    events: EventSink = field(default_factory=lambda: EventSink(report, enabled=False))


def watching(spec: Spec) -> Watching:
    """The values' global.job.supervision.stall, events and stepMetricsPort, with saveFreq and testFreq for the
    bound."""
    stall = spec.opt("supervision.stall", {}) or {}
    policy = StallPolicy(action=stall.get("action", REPORT), factor=float(stall.get("factor", 3.0)),
                         floor_s=float(stall.get("floorSeconds", 600)),
                         startup_s=float(stall.get("startupSeconds", 3600)),
                         save_freq=max(int(spec.opt("trainer.saveFreq", 0) or 0), 0),
                         test_freq=max(int(spec.opt("trainer.testFreq", 0) or 0), 0),
                         gpu_idle_s=(float(stall["gpuIdleMinutes"]) * 60 if stall.get("gpuIdleMinutes") else None),
                         gpu_idle_percent=float(stall.get("gpuIdlePercent", 10)))
    release = (spec.data.get("release") or {}).get("name", "")
    events = EventSink(report, enabled=bool(spec.opt("supervision.events.enabled", False)))
    return Watching(policy, StepMetrics(release), spec.opt("supervision.stepMetricsPort"), events)


class RayAttempts:
    """The supervisor's transport on this head: `regate` re-runs the submit's checks (None: go), then the job."""

    def __init__(self, ray: Ray, argv: list[str], env: dict[str, str], label: str, regate: Callable[[], str | None],
                 checkpoint_dir: str, framework: str, watching: Watching):
        self.ray, self.argv, self.env, self.label, self.regate = ray, argv, env, label, regate
        self.checkpoint_dir, self.framework, self.watching = checkpoint_dir, framework, watching
        self.submitted = 0
        self.last_driver: int | None = None

    def submit(self) -> str:
        if self.submitted:  # the first attempt passed the gate in the submit itself
            refusal = self.regate()
            if refusal:
                raise Refused(refusal)
        self.submitted += 1
        job_id = new_job_id(self.label)
        env = {**self.env, **step_file_env(self.framework, self.checkpoint_dir, job_id)}
        job_id = self.ray.submit(self.argv, env, 0, self.label, job_id=job_id)
        print(f"submit: Ray job id {job_id}" + (f" (attempt {self.submitted})" if self.submitted > 1 else ""),
              flush=True)
        return job_id

    def steps(self, job_id: str) -> Path | CollectorSteps | None:
        """Where the attempt's steps are read: verl's step file; miles' own collector on the driver's node at the
        step-metrics port (the builder turns it on there); None for a miles run without that port."""
        if self.framework == "verl":
            return logstore.steps_path(self.checkpoint_dir, job_id)
        port = self.watching.port
        if port is None:
            return None
        found: list[str] = []  # the driver's node, asked of Ray until it answers (an attempt's driver stays put)

        def url() -> str | None:
            if not found:
                try:
                    address = self.ray.driver_node_ip(job_id)
                except Exception:  # noqa: BLE001 (the job API is busy or restarting: ask again at the next poll)
                    return None
                if not address:
                    return None
                host = f"[{address}]" if ":" in address else address  # an IPv6 literal is bracketed in a URL
                found.append(f"http://{host}:{port}/metrics")
            return found[0]

        return CollectorSteps(url)

    def wait(self, job_id: str) -> tuple[int | None, str]:
        chunks: list[str] = []
        store = logstore.LogWriter(self.checkpoint_dir, job_id, report)
        w = self.watching
        w.metrics.new_attempt(job_id)
        steps = self.steps(job_id)
        watch = None
        if steps is not None:
            idle = (IdleClock(dashboard_reader(self.ray.address), w.policy.gpu_idle_percent)
                    if w.policy.gpu_idle_s is not None else lambda: None)
            watch = AttemptWatch(steps, w.policy, w.metrics, lambda: self.ray.stop(job_id), report, w.events,
                                 gpu_idle_for=idle).start()

        def sink(chunk: str) -> None:
            chunks.append(chunk)
            store.write(chunk)

        try:
            self.ray.follow(job_id, sink)
        finally:
            store.close()
            if watch is not None:
                watch.stop()
        status, driver = self.ray.outcome(job_id)
        self.last_driver = driver
        print(f"submit: Ray job {job_id} ended {status}", file=sys.stdout if status == "SUCCEEDED" else sys.stderr)
        w.events.emit("AttemptEnded", f"attempt {self.submitted}, Ray job {job_id}: {status}"
                      + (f", driver exit code {driver}" if driver is not None else ""),
                      "Normal" if status == "SUCCEEDED" else "Warning")
        text = "".join(chunks)
        if status == "STOPPED":
            if watch is not None and watch.cancelled:
                raise Stalled(watch.cancelled, text)
            raise Stopped(job_id)
        return driver, text


def follow(attempts: RayAttempts, policy: Policy, checkpoint_dir: str, framework: str,
           read_state: Callable[[], ResumeState]) -> int:
    """Supervise to the end; the exit status: 0 done, else the last driver's exit code (1 when it had none)."""
    server = None
    port = attempts.watching.port
    if port is not None:
        server = serve(attempts.watching.metrics, port)
        report(f"step metrics on http://0.0.0.0:{server.server_address[1]}/metrics")
    try:
        decision: Decision = supervise(attempts, policy, checkpoint_dir, framework, read_state, report=report)
    finally:
        if server is not None:
            server.shutdown()
    if decision.action == DONE:
        attempts.watching.events.emit("RunCompleted", "training reached its last step", "Normal")
        return 0
    print(f"submit: gave up: {decision.reason}", file=sys.stderr)
    attempts.watching.events.emit("RunGaveUp", decision.reason)
    driver = attempts.last_driver
    return driver if driver is not None and 0 < driver < 256 else 1
