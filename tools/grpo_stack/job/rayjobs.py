"""The Ray job API of the head the in-pod submit runs in (imported by the submit only: the builder stays
stdlib-only)."""

from __future__ import annotations

import secrets
import shlex
import sys
import time
import urllib.parse
from collections.abc import Callable
from typing import Any

TERMINAL = ("SUCCEEDED", "FAILED", "STOPPED")
ACTIVE = ("PENDING", "RUNNING")
# Every job the submit makes is named `grpo-<framework or step>-<UTC time>-<hex>` (Ray.submit): what tells a run of
# this project from anything else someone submitted to the head.
JOB_PREFIX = "grpo-"


AGENT_WAIT_SECONDS = 120


def new_job_id(label: str) -> str:
    return f"{label}-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}-{secrets.token_hex(3)}"


class Ray:
    """The Ray job API of the head this pod runs (imported here: the builder itself stays stdlib-only)."""

    def __init__(self, address: str):
        from ray.job_submission import JobSubmissionClient

        self.address = address
        self.client = JobSubmissionClient(address)

    def submit(self, argv: list[str], env: dict[str, str], num_gpus: int, label: str, job_id: str = "",
               working_dir: str | None = None) -> str:
        """`working_dir`: a directory of this pod Ray uploads for the job, its driver's and workers' current
        directory on every node."""
        job_id = job_id or new_job_id(label)
        kwargs: dict[str, Any] = {"entrypoint_num_cpus": 1}
        runtime_env: dict[str, Any] = {}
        if env:
            runtime_env["env_vars"] = env
        if working_dir:
            runtime_env["working_dir"] = working_dir
        if num_gpus:
            kwargs["entrypoint_num_gpus"] = num_gpus
        # A head that has just started answers "No available agent" until its job agent registers: retry that
        # (bounded), nothing else.
        deadline = time.monotonic() + AGENT_WAIT_SECONDS
        while True:
            try:
                return self.client.submit_job(entrypoint=shlex.join(argv), submission_id=job_id,
                                              runtime_env=runtime_env or None, **kwargs)
            except RuntimeError as exc:
                if "No available agent" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(2)

    def active_runs(self) -> list[tuple[str, str]]:
        """(submission id, status) of every job this submit made that is PENDING or RUNNING on the head."""
        out = []
        for info in self.client.list_jobs():
            status = str(getattr(info.status, "value", info.status))
            job_id = info.submission_id or ""
            if job_id.startswith(JOB_PREFIX) and status in ACTIVE:
                out.append((job_id, status))
        return sorted(out)

    def follow(self, job_id: str, sink: Callable[[str], None] | None = None) -> None:
        """Stream the job's log to stdout (and each chunk to `sink`) until the job ends."""
        import asyncio

        async def tail() -> None:
            async for chunk in self.client.tail_job_logs(job_id):
                sys.stdout.write(chunk)
                sys.stdout.flush()
                if sink is not None:
                    sink(chunk)

        asyncio.run(tail())

    def stop(self, job_id: str) -> None:
        self.client.stop_job(job_id)

    def wait(self, job_id: str, poll: float = 2.0) -> tuple[str, int]:
        """(status, exit status for this script): 0 when SUCCEEDED, the driver's exit code when Ray has one."""
        status, driver = self.outcome(job_id, poll)
        if status == "SUCCEEDED":
            return status, 0
        return status, driver if driver is not None and 0 < driver < 256 else 1

    def outcome(self, job_id: str, poll: float = 2.0) -> tuple[str, int | None]:
        """(terminal status, the driver's exit code; None where Ray has none: the driver or its node was lost,
        or the job was stopped)."""
        while True:
            info = self.client.get_job_info(job_id)
            status = str(getattr(info.status, "value", info.status))
            if status in TERMINAL:
                code = getattr(info, "driver_exit_code", None)
                return status, 0 if status == "SUCCEEDED" else (code if isinstance(code, int) else None)
            time.sleep(poll)

    def driver_node_ip(self, job_id: str) -> str | None:
        """The address of the node the job's driver runs on; None before Ray placed it. Ray's JobDetails names the
        driver's node once the driver connects (driver_info), and the job agent of that node as soon as the job is
        placed there (driver_agent_http_address, http://<node>:<port>)."""
        info = self.client.get_job_info(job_id)
        driver = getattr(info, "driver_info", None)
        if getattr(driver, "node_ip_address", None):
            return driver.node_ip_address
        agent = getattr(info, "driver_agent_http_address", None)
        return urllib.parse.urlsplit(agent).hostname if agent else None

    def logs(self, job_id: str) -> str:
        return self.client.get_job_logs(job_id)
