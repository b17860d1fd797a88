"""The part of grpo-run that runs INSIDE the release's Ray head pod, where the run's storage and Ray's job API are:

    python3 -m grpo_stack.runctl.inpod status | jobs | logs [JOB] [--follow] [--stored] | stop [JOB]

`status` and `jobs` print one JSON object (grpo-run formats it); `logs` prints the log; `stop` prints what it
stopped. The spec is the job.json the chart mounts (GRPO_JOB_SPEC), Ray's job API the local dashboard
(RAY_ADDRESS), as for the in-pod submit. Standard library and Ray only: the pod has nothing else of ours.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import asdict
from typing import Any

from ..job.miles import resume_mode
from ..job.rayjobs import ACTIVE, JOB_PREFIX, TERMINAL
from ..job.resume import resume_state
from ..job.spec import Spec
from ..supervise import logstore, records
from ..supervise.steps import logged_steps, stated_total

STOP_WAIT_S = 30  # Ray stops a job 3 s after SIGTERM; a little more for the job to be reported STOPPED


def stored_log(checkpoint_dir: str, job_id: str) -> str | None:
    """The driver log kept on the run's storage (grpo_stack.supervise.logstore), None when there is none."""
    try:
        return logstore.read_log(checkpoint_dir, job_id)
    except FileNotFoundError:
        return None


class Run:
    """The release's run as this head pod sees it: spec, storage, Ray's job list."""

    def __init__(self, spec_path: str, address: str):
        with open(spec_path, encoding="utf-8") as fh:
            data = json.load(fh)
        self.spec = Spec(data)
        self.framework = str(self.spec.get("framework"))
        self.checkpoint_dir = self.spec.on_storage(self.spec.get("trainer.checkpointDir"))
        self.address = address
        self._client = None
        self.ray_error = ""

    def client(self):
        if self._client is None:
            from ray.job_submission import JobSubmissionClient

            self._client = JobSubmissionClient(self.address)
        return self._client

    def jobs(self) -> list[dict[str, Any]]:
        """The submit's jobs Ray knows, oldest first; [] with `ray_error` set when Ray cannot be asked."""
        try:
            listed = self.client().list_jobs()
        except Exception as exc:  # noqa: BLE001 - any failure of the job API is reported, not fatal
            self.ray_error = f"Ray's job API at {self.address} did not answer ({exc.__class__.__name__}: {exc})"
            return []
        out = []
        for info in listed:
            job_id = info.submission_id or ""
            if not job_id.startswith(JOB_PREFIX):
                continue
            out.append({"id": job_id, "status": str(getattr(info.status, "value", info.status)),
                        "start": (info.start_time or 0) / 1000, "end": (info.end_time or 0) / 1000 or None,
                        "driverExitCode": getattr(info, "driver_exit_code", None),
                        "training": self.is_training(job_id)})
        return sorted(out, key=lambda j: (j["start"], j["id"]))

    def is_training(self, job_id: str) -> bool:
        return job_id.startswith(f"{JOB_PREFIX}{self.framework}-")

    def log(self, job_id: str) -> tuple[str | None, str]:
        """(text, where from): Ray's copy while the head has it, else the stored one."""
        try:
            return self.client().get_job_logs(job_id), "ray"
        except Exception:  # noqa: BLE001 - a job the head no longer knows (a restarted head): the stored copy
            return stored_log(self.checkpoint_dir, job_id), "stored"

    def latest_training(self, jobs: list[dict[str, Any]]) -> str | None:
        """The newest training job Ray, the stored logs or the attempt records know. The submit's ids carry their UTC
        start (`grpo-verl-20260101-000000-ab12cd`), so the greatest id is the newest."""
        ids = {j["id"] for j in jobs} | set(logstore.job_ids(self.checkpoint_dir))
        ids |= {a.job_id for a in records.read(self.checkpoint_dir)}
        training = [i for i in ids if i and self.is_training(i)]
        return max(training) if training else None


def status(run: Run) -> dict[str, Any]:
    jobs = run.jobs()
    attempts = [asdict(a) for a in records.read(run.checkpoint_dir)]
    mode, path = resume_mode(run.spec)
    state = resume_state(run.framework, run.checkpoint_dir, mode, path)
    latest = run.latest_training(jobs)
    steps: dict[str, Any] = {"job": latest, "first": None, "last": None, "total": None, "from": None}
    if latest:
        text, where = run.log(latest)
        if text is not None:
            logged = logged_steps(text, run.framework)
            steps.update(first=logged.first, last=logged.last, total=stated_total(text, run.framework), **{
                "from": where})
    return {"framework": run.framework, "checkpointDir": run.checkpoint_dir, "jobs": jobs, "rayError": run.ray_error,
            "attempts": attempts, "checkpoint": {"kind": state.kind, "step": state.step, "detail": state.detail},
            "retries": int(run.spec.opt("supervision.retries", 0) or 0), "steps": steps}


def active(run: Run) -> list[dict[str, Any]]:
    return [j for j in run.jobs() if j["status"] in ACTIVE]


def stop(run: Run, job_id: str | None) -> int:
    targets = [job_id] if job_id else [j["id"] for j in active(run)]
    if run.ray_error:
        print(run.ray_error, file=sys.stderr)
        return 2
    if not targets:
        print("nothing to stop: no job of this release is PENDING or RUNNING", file=sys.stderr)
        return 2
    client = run.client()
    for target in targets:
        try:
            client.stop_job(target)
        except RuntimeError as exc:
            print(f"{target}: {exc}", file=sys.stderr)
            return 2
    deadline = time.monotonic() + STOP_WAIT_S
    ended = {}
    while len(ended) < len(targets) and time.monotonic() < deadline:
        for target in targets:
            now = str(client.get_job_status(target).value)
            if now in TERMINAL:
                ended[target] = now
        time.sleep(0.5)
    print(json.dumps({"stopped": {t: ended.get(t, "still stopping") for t in targets}}))
    return 0


def logs(run: Run, job_id: str | None, follow: bool, stored: bool) -> int:
    target = job_id or run.latest_training(run.jobs())
    if not target:
        print(f"no job of this release has logs (Ray's job list, {logstore.log_path(run.checkpoint_dir, 'X')})",
              file=sys.stderr)
        return 2
    if not stored and follow:
        import asyncio

        async def tail() -> None:
            async for chunk in run.client().tail_job_logs(target):
                sys.stdout.write(chunk)
                sys.stdout.flush()

        try:
            asyncio.run(tail())
            return 0
        except Exception as exc:  # noqa: BLE001 - a job the head does not know: fall back to the stored log
            print(f"{target}: no live log from Ray ({exc}); the stored log follows", file=sys.stderr)
    text, where = (stored_log(run.checkpoint_dir, target), "stored") if stored else run.log(target)
    if text is None:
        print(f"{target}: no log, neither in Ray nor at {logstore.log_path(run.checkpoint_dir, target)}",
              file=sys.stderr)
        return 2
    sys.stdout.write(text)
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m grpo_stack.runctl.inpod", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--spec", default=os.environ.get("GRPO_JOB_SPEC", "/etc/grpo-stack/job.json"))
    p.add_argument("--address", default=os.environ.get("RAY_ADDRESS", "http://127.0.0.1:8265"))
    sub = p.add_subparsers(dest="verb", required=True)
    sub.add_parser("status")
    sub.add_parser("jobs")
    lg = sub.add_parser("logs")
    lg.add_argument("job", nargs="?")
    lg.add_argument("--follow", action="store_true")
    lg.add_argument("--stored", action="store_true")
    st = sub.add_parser("stop")
    st.add_argument("job", nargs="?")
    opts = p.parse_args(argv)
    try:
        run = Run(opts.spec, opts.address)
    except (OSError, ValueError) as exc:  # a BuildError (a spec without its keys) is a ValueError
        print(f"cannot read the job spec {opts.spec}: {exc}", file=sys.stderr)
        return 2
    if opts.verb == "status":
        print(json.dumps(status(run)))
        return 0
    if opts.verb == "jobs":
        jobs = run.jobs()
        print(json.dumps({"jobs": jobs, "rayError": run.ray_error,
                          "stored": logstore.job_ids(run.checkpoint_dir),
                          "attempts": [asdict(a) for a in records.read(run.checkpoint_dir)]}))
        return 0
    if opts.verb == "stop":
        return stop(run, opts.job)
    return logs(run, opts.job, opts.follow, opts.stored)


if __name__ == "__main__":
    raise SystemExit(main())
