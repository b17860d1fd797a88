"""`grpo-run status`: the run's phase, attempt, step of total, last checkpoint and why the last attempt ended, from
the cluster's objects and what the head pod reads on the run's storage (runctl.inpod status). Pure: dicts in,
lines out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..job.rayjobs import ACTIVE

# How the supervisor's reasons begin (supervise/decide.py): a finished run, a resubmission, else it gave up.
FINISHED, RESUBMITTING = "finished", "resubmitting"


@dataclass(frozen=True)
class ClusterView:
    """What the API server says: mode, the RayCluster's and RayJob's objects, the pods."""

    release: str
    namespace: str
    mode: str
    raycluster: dict[str, Any] | None
    rayjob: dict[str, Any] | None
    head: dict[str, Any] | None
    workers: list[dict[str, Any]]


def desired_workers(raycluster: dict[str, Any] | None) -> int:
    spec = (raycluster or {}).get("spec") or {}
    if spec.get("suspend"):
        return 0
    return sum(int(g.get("replicas") or 0) for g in spec.get("workerGroupSpecs") or [] if not g.get("suspend"))


def ready(pod: dict[str, Any]) -> bool:
    status = pod.get("status") or {}
    return status.get("phase") == "Running" and any(
        c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])


def cluster_line(view: ClusterView) -> str:
    rc = view.raycluster
    if rc is None:
        return "no RayCluster (the RayJob has not made one, or deleted it after the job ended)"
    name, spec = rc["metadata"]["name"], rc.get("spec") or {}
    if spec.get("suspend"):
        return f"RayCluster {name} suspended: no head, no workers"
    want = desired_workers(rc)
    up = sum(1 for w in view.workers if ready(w))
    head = "head Ready" if view.head is not None and ready(view.head) else "head not Ready"
    if want == 0:
        return f"RayCluster {name}: {head}, workers scaled to zero (GPUs freed)"
    return f"RayCluster {name}: {head}, {up} of {want} workers Ready"


def summary_line(raycluster: dict[str, Any] | None) -> str:
    """One line from the RayCluster's own status, as the operator keeps it (`grpo-run list`: no pod lookups)."""
    if raycluster is None:
        return "no RayCluster"
    spec, status = raycluster.get("spec") or {}, raycluster.get("status") or {}
    if spec.get("suspend"):
        return "suspended: no head, no workers"
    state = status.get("state") or "not reconciled yet"
    want = desired_workers(raycluster)
    if want == 0:
        return f"{state}, workers scaled to zero (GPUs freed)"
    return f"{state}, {status.get('readyWorkerReplicas') or 0} of {want} workers Ready"


def job_mode_line(rayjob: dict[str, Any] | None) -> str | None:
    if rayjob is None:
        return None
    status = rayjob.get("status") or {}
    return (f"RayJob {rayjob['metadata']['name']}: deployment {status.get('jobDeploymentStatus') or 'not started'}, "
            f"job {status.get('jobStatus') or 'not submitted'}")


def phase(run: dict[str, Any]) -> str:
    """From the in-pod view: running/pending (a job of the submit is), else how the last recorded attempt ended,
    else the last job's own status."""
    jobs = run.get("jobs") or []
    live = [j for j in jobs if j["status"] in ACTIVE]
    if live:
        return ", ".join(f"{j['status'].lower()} (Ray job {j['id']})" for j in live)
    attempts = run.get("attempts") or []
    if attempts:
        end = attempts[-1]["end"]
        if end.startswith(FINISHED):
            return "finished"
        if RESUBMITTING in end:
            return "not running: the last attempt was to be resubmitted and nothing runs (the supervisor ended " \
                   "with its head pod?); submit again to resume"
        return "gave up"
    if jobs:
        last = jobs[-1]
        return f"{last['status'].lower()} (Ray job {last['id']}, not supervised)"
    return "no run submitted on this Ray cluster"


def attempt_line(run: dict[str, Any]) -> str:
    attempts = run.get("attempts") or []
    running = any(j["status"] in ACTIVE and j.get("training") for j in run.get("jobs") or [])
    budget = f" (supervision.retries {run.get('retries', 0)})"
    if running:
        return f"{len(attempts) + 1}, running" + budget
    if attempts:
        return f"{attempts[-1]['attempt']}, ended" + budget
    return "none recorded" + budget


def step_line(run: dict[str, Any]) -> str:
    steps = run.get("steps") or {}
    attempts = run.get("attempts") or []
    last, total = steps.get("last"), steps.get("total")
    if last is None and attempts:
        last = attempts[-1].get("last_step")
    if last is None:
        return "no step logged yet" if steps.get("job") else "-"
    of = f" of {total}" if total is not None else " (the total is not stated: verl states it at start)"
    where = f", Ray job {steps['job']}" if steps.get("job") else ""
    return f"{last}{of}{where}"


def checkpoint_line(run: dict[str, Any]) -> str:
    ck = run.get("checkpoint") or {}
    if ck.get("kind") == "resume":
        return f"step {ck.get('step')} ({ck.get('detail')})"
    return f"none ({ck.get('detail')})" if ck.get("kind") == "fresh" else f"{ck.get('kind')}: {ck.get('detail')}"


def last_end_line(run: dict[str, Any]) -> str:
    attempts = run.get("attempts") or []
    if not attempts:
        return "no attempt recorded (recorded by `submit --follow`, docs/day-2.md)"
    a = attempts[-1]
    return f"attempt {a['attempt']}: {a['end']}"


def lines(view: ClusterView, run: dict[str, Any] | None, run_error: str = "") -> list[str]:
    """The status a user reads; `run` is the in-pod view (None with `run_error` when it could not be read)."""
    out = [("release", f"{view.release} in {view.namespace}, {view.mode} mode"), ("cluster", cluster_line(view))]
    if (job := job_mode_line(view.rayjob)) is not None:
        out.append(("job", job))
    if run is None:
        out.append(("run", f"not readable: {run_error}"))
    else:
        if run.get("rayError"):
            out.append(("ray", run["rayError"]))
        out += [("phase", phase(run)), ("attempt", attempt_line(run)), ("step", step_line(run)),
                ("checkpoint", checkpoint_line(run)), ("last ended", last_end_line(run)),
                ("storage", run.get("checkpointDir", "?"))]
    width = max(len(k) for k, _ in out) + 1
    return [f"{k + ':':<{width}} {v}" for k, v in out]
