"""Starting the service as a subprocess and looking at its processes through /proc."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
from grpo_stack.localcluster.ports import free_port

SERVICE_DIR = Path(__file__).resolve().parents[2] / "images" / "reward-service"
START_TIMEOUT_S = 60
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")

# The routing table every test server gets unless a test passes its own REWARD_ROUTES.
TEST_ROUTES = {"test_math": "math", "openai/gsm8k": "math", "numina_olympiads": "math", "test_exact": "exact_match",
               "test_chrf": "chrf"}
# Payloads posted through ServiceProcess.post without a data_source are scored as this (math) source.
DEFAULT_SOURCE = "test_math"


def service_env(overrides: dict[str, str]) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("REWARD_")}
    env.update({"PYTHONPATH": str(SERVICE_DIR), "REWARD_HOST": "127.0.0.1", "REWARD_ROUTES": json.dumps(TEST_ROUTES)})
    env.update(overrides)
    return env


def _is_ready_reply(reply: httpx.Response) -> bool:
    """The reward service's own readiness answer: another test's server on the port (a metrics endpoint answers
    200 to any GET) is not mistaken for it."""
    try:
        return reply.status_code == 200 and reply.json() == {"status": "ready"}
    except ValueError:
        return False


class ServiceProcess:
    """`python -m reward_service` on free loopback ports, ready before the `with` body runs."""

    def __init__(self, env: dict[str, str], workdir: Path, python: str = sys.executable):
        self.python = python  # an interpreter with images/reward-service's requirements
        self.port = free_port()
        self.metrics_port = free_port()
        self.env = service_env({"PORT": str(self.port), "METRICS_PORT": str(self.metrics_port), **env})
        self.log_path = workdir / "service.log"
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> ServiceProcess:
        self._log = self.log_path.open("wb")
        self.proc = subprocess.Popen([self.python, "-m", "reward_service"], cwd=SERVICE_DIR, env=self.env,
                                     stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"service exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                if _is_ready_reply(httpx.get(self.url + "/ready", timeout=5)):
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        self.__exit__(None, None, None)
        raise RuntimeError(f"service not ready within {START_TIMEOUT_S} s:\n{self.log_tail()}")

    def __exit__(self, *exc) -> None:
        if self.proc and self.proc.poll() is None:
            pids = descendants(self.proc.pid)
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            for pid in pids:  # nothing the service started may outlive it
                _kill_quietly(pid)
        self._log.close()

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace")

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])

    def post(self, payload: dict, path: str = "/score", timeout: float = 60) -> httpx.Response:
        """POST a sample (or a batch); a sample without any data_source is sent as DEFAULT_SOURCE."""
        if path == "/score/batch" and isinstance(payload.get("samples"), list):
            payload = {**payload, "samples": [with_source(sample) for sample in payload["samples"]]}
        elif path == "/score":
            payload = with_source(payload)
        return httpx.post(self.url + path, json=payload, timeout=timeout)

    def metric(self, name: str, labels: str = "") -> float:
        text = httpx.get(self.url + "/metrics", timeout=10).text
        return metric_value(text, name, labels)

    def workers(self) -> list[int]:
        return worker_pids(self.proc.pid)

    def forkserver(self) -> int | None:
        servers = forkserver_pids(self.proc.pid)
        return servers[0] if servers else None

    def wait_for_idle_workers(self, count: int, timeout_s: float = 20) -> list[int]:
        """Wait until exactly `count` workers exist and none burns CPU; return their pids."""
        deadline = time.monotonic() + timeout_s
        pids: list[int] = []
        while time.monotonic() < deadline:
            pids = self.workers()
            if len(pids) == count and all(cpu_seconds_over(pid, 0.5) < 0.2 for pid in pids):
                return pids
            time.sleep(0.2)
        raise AssertionError(f"expected {count} idle workers, found {pids}; log:\n{self.log_tail()}")


def with_source(sample):
    if not isinstance(sample, dict) or "data_source" in sample:
        return sample
    named = (isinstance(sample.get("metadata"), dict) and "data_source" in sample["metadata"]) or (
        isinstance(sample.get("label"), dict) and "data_source" in sample["label"])
    return sample if named else {"data_source": DEFAULT_SOURCE, **sample}


def metric_value(text: str, name: str, labels: str = "") -> float:
    pattern = re.escape(name + (f"{{{labels}}}" if labels else "")) + r" ([0-9.e+-]+)$"
    match = re.search(pattern, text, re.MULTILINE)
    if not match:
        raise AssertionError(f"metric {name}{{{labels}}} not exported")
    return float(match.group(1))


def _stat_fields(pid: int) -> list[str]:
    text = Path(f"/proc/{pid}/stat").read_text()
    return text[text.rindex(")") + 2:].split()  # fields after the command name, starting at `state`


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int(_stat_fields(int(entry.name))[1]) == pid:
                    found.append(int(entry.name))
            except (OSError, ValueError, IndexError):
                continue
    return found


def descendants(pid: int) -> list[int]:
    found = []
    for child in children(pid):
        found.append(child)
        found.extend(descendants(child))
    return found


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


# The name a worker gives itself (reward_service.worker.PROCESS_NAME); forked from the forkserver, a worker keeps
# the forkserver's command line.
WORKER_NAME = "reward-worker"


def process_state(pid: int) -> str:
    """/proc state letter (R, S, T stopped, Z zombie, ...), or "" when the process is gone."""
    try:
        return _stat_fields(pid)[0]
    except (OSError, IndexError):
        return ""


def process_name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def running(pid: int) -> bool:
    """Exists and is neither a zombie nor dead."""
    return process_state(pid) not in ("", "Z", "X")


def forkserver_pids(server_pid: int) -> list[int]:
    return sorted(pid for pid in children(server_pid)
                  if "forkserver" in cmdline(pid) and process_name(pid) != WORKER_NAME and running(pid))


def worker_pids(server_pid: int) -> list[int]:
    """Pool workers: the forkserver's children, and workers the server adopted after their forkserver died."""
    found = {pid for server in forkserver_pids(server_pid) for pid in children(server)}
    found |= {pid for pid in children(server_pid) if process_name(pid) == WORKER_NAME}
    return sorted(pid for pid in found if running(pid))


def cpu_seconds(pid: int) -> float:
    fields = _stat_fields(pid)
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime + stime


def cpu_seconds_over(pid: int, interval_s: float) -> float:
    try:
        before = cpu_seconds(pid)
        time.sleep(interval_s)
        return cpu_seconds(pid) - before
    except OSError:
        return 0.0  # the process is gone, so it is not spinning


def status_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"{field} missing for pid {pid}")


def address_space_limit(pid: int) -> int | None:
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max address space"):
            soft = line.split()[3]
            return None if soft == "unlimited" else int(soft)
    return None


def _kill_quietly(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
