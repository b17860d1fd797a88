"""A real local Ray head for the tiers that run jobs on one (start-up, recipes, loop).

`ray start --head --block` on 127.0.0.1 in a process group of its own, every port it would otherwise take at a
fixed default (client server 10001, dashboard agent 52365, ...) picked free, under a short temp dir of its own
(Ray's AF_UNIX socket paths must stay under 107 bytes). It is ended by signalling that group, never by
`ray stop`, which would end every Ray on the machine: another tier's, a developer's.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from grpo_stack.localcluster.ports import free_port

OWN_PORTS = ("ray-client-server-port", "dashboard-agent-listen-port", "dashboard-agent-grpc-port",
             "metrics-export-port", "runtime-env-agent-port", "node-manager-port", "object-manager-port")


class RayHead:
    """`gpus` logical GPUs and `cpus` CPUs; with `dashboard` the job API answers at `address` (http://...),
    without it `address` is the GCS (host:port)."""

    def __init__(self, ray: Path, *, gpus: int, cpus: int, env: dict[str, str], dashboard: bool = True,
                 extra: tuple[str, ...] = ()):
        self.ray, self.gpus, self.cpus, self.dashboard = ray, gpus, cpus, dashboard
        # Authentication off unless the caller says otherwise: with RAY_AUTH_MODE unset, Ray 2.60 turns token
        # authentication on for any head when ~/.ray/auth_token exists (its own ray.init() writes one for a new
        # local cluster), and this head's clients, which send no token, are then refused.
        self.env = {"RAY_AUTH_MODE": "disabled", **env}
        self.port = free_port()
        self.dashboard_port = free_port() if dashboard else None
        self.address = f"http://127.0.0.1:{self.dashboard_port}" if dashboard else f"127.0.0.1:{self.port}"
        self.extra = extra
        self.temp_dir = Path(tempfile.mkdtemp(prefix="rh", dir="/tmp"))
        self.proc: subprocess.Popen | None = None

    def start(self, ready: Callable[[], bool], timeout: float = 180, cwd: Path | None = None) -> None:
        """Start, then poll `ready` until it holds; the head's log tail in the error when it never does."""
        dashboard = ([f"--dashboard-port={self.dashboard_port}", "--dashboard-host=127.0.0.1",
                      "--include-dashboard=true"] if self.dashboard else ["--include-dashboard=false"])
        cmd = [str(self.ray), "start", "--head", "--block", "--node-ip-address=127.0.0.1", f"--port={self.port}",
               *dashboard, f"--num-cpus={self.cpus}", f"--num-gpus={self.gpus}", "--disable-usage-stats",
               f"--temp-dir={self.temp_dir}", *(f"--{name}={free_port()}" for name in OWN_PORTS), *self.extra]
        self.log = (self.temp_dir / "head.log").open("wb")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True,
                                     env=self.env, cwd=cwd or self.temp_dir)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"ray head exited with {self.proc.returncode}:\n{self.log_tail()}")
            if ready():
                return
            time.sleep(1)
        self.stop()
        raise RuntimeError(f"ray head not ready within {timeout:.0f} s:\n{self.log_tail()}")

    def accepts_a_job(self) -> bool:
        """The head's job agent registers after the dashboard answers (a minute or more on a loaded machine); until
        then every submit is refused with "No available agent"."""
        return subprocess.run([str(self.ray), "job", "submit", "--address", self.address, "--", "true"],
                              capture_output=True, env=self.env, timeout=120).returncode == 0

    def gcs_up(self) -> bool:
        """The GCS port answers and the session exists (the raylet registers just after: wait a little more)."""
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", self.port)) == 0 and (self.temp_dir / "session_latest").exists():
                time.sleep(2)
                return True
        return False

    def log_tail(self) -> str:
        path = self.temp_dir / "head.log"
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=30)
        shutil.rmtree(self.temp_dir, ignore_errors=True)
