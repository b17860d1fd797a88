"""Fixtures for the start-up tier: the start-up venv, one local Ray head per session, built commands."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from ..tier_venvs import venv_path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
SETUP_SCRIPT = HERE / "setup_startup_venv.sh"
MARKER_NAME = ".grpo-startup-installed"
SKIP_ENV = "GRPO_SKIP_STARTUP"
SETUP_HINT = f"create it with: bash {SETUP_SCRIPT.relative_to(REPO_ROOT)}"
RAY_START_TIMEOUT_S = 120


def startup_venv() -> Path:
    return venv_path("startup")


def startup_python() -> Path:
    """The start-up venv's interpreter; fails (never skips) when it is missing, unless GRPO_SKIP_STARTUP=1."""
    if os.environ.get(SKIP_ENV) == "1":
        pytest.skip(f"{SKIP_ENV}=1: start-up tier skipped on request")
    venv = startup_venv()
    python = venv / "bin" / "python"
    if not (python.exists() and (venv / MARKER_NAME).exists()):
        pytest.fail(f"start-up venv missing at {venv}; {SETUP_HINT}; or set {SKIP_ENV}=1 to skip", pytrace=False)
    return python


def pytest_configure(config):
    config.addinivalue_line("markers", "startup: real verl start-up against a local Ray head (.venv-startup)")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class RayHead:
    """`ray start --head --block` on 127.0.0.1 in its own process group, advertising `gpus` logical GPUs.

    Ended by signalling that process group (never `ray stop`, which would end every Ray on the machine).
    """

    def __init__(self, python: Path, gpus: int):
        self.python = python
        self.gpus = gpus
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        # Ray's socket paths must stay short (AF_UNIX limit), hence a short temp dir of our own.
        self.temp_dir = Path(tempfile.mkdtemp(prefix="rs", dir="/tmp"))
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        ray = self.python.parent / "ray"
        cmd = [str(ray), "start", "--head", "--block", "--node-ip-address=127.0.0.1", f"--port={self.port}",
               "--num-cpus=64", f"--num-gpus={self.gpus}", "--include-dashboard=false",
               "--disable-usage-stats", f"--temp-dir={self.temp_dir}", "--object-store-memory=600000000"]
        self.log = (self.temp_dir / "head.log").open("wb")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True,
                                     env=ray_env())
        deadline = time.monotonic() + RAY_START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"ray head exited with {self.proc.returncode}:\n{self.log_tail()}")
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", self.port)) == 0 and (self.temp_dir / "session_latest").exists():
                    time.sleep(2)  # the raylet registers just after the GCS port opens
                    return
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"ray head not up within {RAY_START_TIMEOUT_S} s:\n{self.log_tail()}")

    def log_tail(self) -> str:
        path = self.temp_dir / "head.log"
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        shutil.rmtree(self.temp_dir, ignore_errors=True)


def ray_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAY_", "VIRTUAL_ENV"))}
    env.update({"RAY_USAGE_STATS_ENABLED": "0", "TOKENIZERS_PARALLELISM": "false", "PYTHONUNBUFFERED": "1"})
    return env


@pytest.fixture(scope="session")
def ray_head():
    """One head for the session (8 logical GPUs: the per-node shape of every shipped verl values file)."""
    head = RayHead(startup_python(), gpus=8)
    head.start()
    yield head
    head.stop()
