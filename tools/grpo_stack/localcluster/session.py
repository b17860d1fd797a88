"""`grpo-cluster up` / `down` / `status`: one local cluster per state directory, held by a background process.

`up` checks the values, builds the binaries when missing, then starts `python -m grpo_stack.localcluster.session
DIR` in its own session. That process (the holder) starts the control plane, creates the nodes and the namespace
prerequisites, writes `state.json`, and keeps everything up until SIGTERM or SIGINT, when it stops every
component (each dies with the holder too, even on SIGKILL: Linux's parent-death signal). `down` signals the
holder and waits for it. Nothing listens beyond 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from .plan import Plan

STATE = "state.json"
PLAN = "plan.json"
HOLDER_LOG = "holder.log"
UP_TIMEOUT_S = 600  # start, nodes Ready, PVC Bound; a cold machine's first API server start is the slow part
DOWN_TIMEOUT_S = 60


class SessionError(RuntimeError):
    pass


def default_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "grpo-stack" / "local-cluster"


@dataclass(frozen=True)
class State:
    pid: int
    kubeconfig: str
    server: str
    namespace: str
    nodes: list[str]
    components: dict[str, int]  # name -> pid

    @classmethod
    def read(cls, directory: Path) -> State | None:
        try:
            return cls(**json.loads((directory / STATE).read_text()))
        except (OSError, ValueError, TypeError):
            return None


def alive(pid: int) -> bool:
    """The process exists and has not exited (a zombie nobody reaped yet has: its parent, `up`, is gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rpartition(")")[2].split()[:1] != ["Z"]


def running(directory: Path) -> State | None:
    state = State.read(directory)
    return state if state and alive(state.pid) else None


def up(directory: Path, cluster_plan: Plan, kubectl: str, *, timeout: float = UP_TIMEOUT_S) -> State:
    """Start the holder for `cluster_plan` and wait until it reports the cluster ready."""
    if (state := running(directory)) is not None:
        raise SessionError(f"a local cluster is already up in {directory} (holder pid {state.pid}); "
                           f"`grpo-cluster down --dir {directory}` first")
    directory.mkdir(parents=True, exist_ok=True)
    (directory / STATE).unlink(missing_ok=True)
    (directory / PLAN).write_text(json.dumps(cluster_plan.to_json(), indent=1))
    with (directory / HOLDER_LOG).open("wb") as log:
        holder = subprocess.Popen(  # noqa: S603 - our own module, no shell
            [sys.executable, "-m", "grpo_stack.localcluster.session", str(directory), kubectl],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = State.read(directory)
        if state and state.pid == holder.pid:
            return state
        if holder.poll() is not None:
            raise SessionError(f"the local cluster did not start (exit {holder.returncode}):\n{_tail(directory)}")
        time.sleep(0.5)
    os.killpg(holder.pid, signal.SIGTERM)
    raise SessionError(f"the local cluster was not ready within {timeout:.0f}s:\n{_tail(directory)}")


def down(directory: Path, *, timeout: float = DOWN_TIMEOUT_S) -> bool:
    """Stop the holder of `directory` (and with it every component); False when none was running."""
    state = running(directory)
    if state is None:
        return False
    os.kill(state.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive(state.pid) and not any(alive(p) for p in state.components.values()):
            (directory / STATE).unlink(missing_ok=True)
            return True
        time.sleep(0.2)
    for pid in (state.pid, *state.components.values()):
        _kill(pid)
    (directory / STATE).unlink(missing_ok=True)
    return True


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _tail(directory: Path, chars: int = 3000) -> str:
    path = directory / HOLDER_LOG
    return path.read_text(errors="replace")[-chars:] if path.exists() else ""


def hold(directory: Path, kubectl: str) -> int:
    """The holder: start, prepare, report, wait for a signal, stop. Runs in its own process."""
    from . import binaries
    from .cluster import ControlPlane
    from .prerequisites import install_prerequisites

    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda *_: stop.set())
    cluster_plan = Plan.from_json(json.loads((directory / PLAN).read_text()))
    cp = ControlPlane(binaries.tools_dir(), Path(kubectl), directory, operator_lease=True)
    try:
        cp.start()
        names: list[str] = []
        for shape in cluster_plan.nodes:
            row = _row(shape.row)
            names += cp.create_nodes(shape.instance_type, shape.count, labels=shape.labels or None, row=row)
        ns = cluster_plan.namespace
        cp.create_namespace(ns.name, enforce="privileged", warn="restricted")
        install_prerequisites(cp, ns.name, secret=(ns.secret, ns.secret_key), claim=ns.claim, capacity=ns.capacity)
        state = State(os.getpid(), str(cp.kubeconfig), cp.server, ns.name, names,
                      {c.name: c.proc.pid for c in cp.components if c.proc})
        tmp = directory / f".{STATE}.part"
        tmp.write_text(json.dumps(state.__dict__, indent=1))
        os.replace(tmp, directory / STATE)  # `up` reads it whole or not at all
        print(f"local cluster up: {cp.server}, {len(names)} node(s), namespace {ns.name}", flush=True)
        while not stop.wait(5):
            dead = [c.name for c in cp.components if c.proc and c.proc.poll() is not None]
            if dead:
                print(f"component(s) exited: {', '.join(dead)}; stopping", flush=True)
                return 1
        return 0
    finally:
        cp.stop()
        (directory / STATE).unlink(missing_ok=True)
        print("local cluster stopped", flush=True)


def _row(data: dict):
    from ..catalog.instances import InstanceType

    return InstanceType(**data) if data else None


if __name__ == "__main__":
    raise SystemExit(hold(Path(sys.argv[1]), sys.argv[2]))
