"""The loop tier's harness: a real local Ray head with logical GPUs, the real reward service on loopback, the
builder's command from a shipped values file plus the overlay, submitted through the project's in-pod submit.

One `World` per session: storage (a temp directory standing in for FSx), the tiny model and data, the reward
service and the Ray head. A `Launch` is one submit (`--follow`): its log, the steps verl logged, and the events
injected from outside (`kill_during_step`); events injected inside the run are LOOP_EVENTS (loop_events.py).
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import re
import signal
import subprocess
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ..rayhead import RayHead, free_port
from . import cpu_set

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
BASE_VALUES = REPO_ROOT / "values" / "qwen3-8b.yaml"
OVERLAY = HERE / "overlay.yaml"
MARKER_NAME = ".grpo-loop-installed"
SETUP_SCRIPT = HERE / "setup_loop_venv.sh"
RELEASE, NAMESPACE = "grpo", "grpo"
STEPS = 4                      # one launch of 4 steps: killed in a later step, resumed to the end
HEAD_GPUS = 2                  # logical GPUs: the run takes 1; the 2-GPU resubmit must be refused, not unplaceable
STEP_LINE = re.compile(r"step:(\d+) - (.*)$")
TRACKER = "latest_checkpointed_iteration.txt"


def loop_venv() -> Path:
    from ..tier_venvs import venv_path

    return venv_path("loop")


def loop_python() -> Path:
    """The loop venv's interpreter; a failure (never a skip) when missing; GRPO_SKIP_LOOP=1 skips, except in CI."""
    import pytest

    if os.environ.get("GRPO_SKIP_LOOP") == "1" and os.environ.get("CI") != "true":
        pytest.skip("GRPO_SKIP_LOOP=1: loop tier skipped on request")
    venv = loop_venv()
    python = venv / "bin" / "python"
    if not (python.exists() and (venv / MARKER_NAME).exists()):
        pytest.fail(f"loop venv missing at {venv}; create it with `make loop` (bash "
                    f"{SETUP_SCRIPT.relative_to(REPO_ROOT)})", pytrace=False)
    return python


def merge(base: dict, over: dict) -> dict:
    out = copy.deepcopy(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def loop_values(mount: Path, gpus: int | None = None, metrics_port: int | None = None) -> dict:
    """values/qwen3-8b.yaml + tests/loop/overlay.yaml, the storage mount at `mount` (and another GPU count, the
    port of the step metrics)."""
    from grpo_stack.values import load_values_file

    data = merge(load_values_file(BASE_VALUES).data, yaml.safe_load(OVERLAY.read_text()))
    data["global"].setdefault("storage", {})["mountPath"] = str(mount)
    if metrics_port is not None:
        data["global"]["job"].setdefault("supervision", {})["stepMetricsPort"] = metrics_port
    if gpus is not None:
        data["global"]["cluster"]["gpusPerNode"] = gpus
    return data


def rendered(values: dict):
    from grpo_stack.render import render

    return render(values, release=RELEASE, namespace=NAMESPACE)


def reward_service_env(release) -> dict[str, str]:
    """The REWARD_* environment the chart renders for the reward service's container."""
    for obj in release.of_kind("Deployment"):
        if obj.obj["metadata"]["labels"].get("app.kubernetes.io/component") == "reward-service" or \
                "reward" in obj.name:
            env = obj.obj["spec"]["template"]["spec"]["containers"][0].get("env", [])
            return {e["name"]: e["value"] for e in env if e["name"].startswith("REWARD_") and "value" in e}
    raise AssertionError("the render has no reward-service Deployment")


def clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAY_", "VIRTUAL_ENV", "PYTHON", "VERL_",
                                                                    "VLLM_", "LOOP_"))}
    env.update({"RAY_USAGE_STATS_ENABLED": "0", "TOKENIZERS_PARALLELISM": "false", "PYTHONUNBUFFERED": "1",
                "HYDRA_FULL_ERROR": "1", "WANDB_MODE": "disabled", "HF_HUB_OFFLINE": "1"})
    return env


class LoopHead(RayHead):
    """The loop's Ray head (tests/rayhead.py) with a dashboard (the job API the submit uses) and `gpus` logical
    GPUs; the CPU set's `env` entries are its environment. Job drivers start in its temp dir, where verl writes
    Hydra's outputs/ and tensorboard_log/."""

    def __init__(self, python: Path, gpus: int, env: dict[str, str]):
        # Ray 2.53 gives the dashboard 60 s to come up (ray_constants.py RAY_DASHBOARD_STARTUP_TIMEOUT_S) and each of
        # its module subprocesses 30 s (dashboard/consts.py); on a loaded 2-core machine that is too short, and
        # `ray start` then exits 1.
        slow_start = {"RAY_DASHBOARD_STARTUP_TIMEOUT_S": "300",
                      "RAY_DASHBOARD_SUBPROCESS_MODULE_WAIT_READY_TIMEOUT": "240"}
        super().__init__(python.parent / "ray", gpus=gpus, cpus=16, env={**env, **slow_start},
                         extra=("--object-store-memory=600000000",))
        self.python = python

    def start(self, timeout: float = 180) -> None:  # type: ignore[override]
        super().start(lambda: self.helper("ready", timeout=60).returncode == 0, timeout=timeout)

    def helper(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.python), str(HERE / "ray_query.py"), self.address, *args], text=True,
                              capture_output=True, env=clean_env(), timeout=timeout)


@dataclass
class Launch:
    """One `submit --follow`: the submit's output (its banner, then the job's logs) and what verl logged."""

    name: str
    argv: list[str]
    log_path: Path
    proc: subprocess.Popen | None = None
    rc: int | None = None
    started: float = 0.0
    elapsed: float = 0.0
    events: list[str] = field(default_factory=list)

    def text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def steps(self) -> dict[int, dict[str, float]]:
        """training step -> the metrics verl's console logger printed for it (`step:N - key:value - ...`; the
        validation lines, logged at the step they follow, are left out)."""
        out: dict[int, dict[str, float]] = {}
        for line in self.text().splitlines():
            m = STEP_LINE.search(line)
            if not m or "training/global_step:" not in line:
                continue
            metrics = {}
            for part in m.group(2).split(" - "):
                key, _, value = part.partition(":")
                with contextlib.suppress(ValueError):
                    metrics[key.strip()] = float(value)
            out[int(m.group(1))] = metrics
        return out

    def job_id(self) -> str | None:
        m = re.search(r"^submit: Ray job id (\S+)$", self.text(), re.M)
        return m.group(1) if m else None

    def tail(self, chars: int = 6000) -> str:
        return self.text()[-chars:]


class Scraper:
    """Scrapes the supervised submit's step metrics (http://127.0.0.1:PORT/metrics) every second from a thread,
    keeping every answer with the launch it was taken in; refused connections (no submit following) are skipped."""

    def __init__(self, port: int):
        self.url = f"http://127.0.0.1:{port}/metrics"
        self.scrapes: list[tuple[str, str]] = []  # (launch name, exposition text)
        self.launch = ""
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> Scraper:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._done.set()
        self._thread.join(timeout=10)

    def scrape(self) -> str | None:
        try:
            with urllib.request.urlopen(self.url, timeout=5) as resp:
                text = resp.read().decode()
        except OSError:
            return None
        self.scrapes.append((self.launch, text))
        return text

    def _run(self) -> None:
        while not self._done.wait(1.0):
            self.scrape()


class World:
    """Storage, tiny model and data, reward service and Ray head, for every launch of a session."""

    def __init__(self, root: Path):
        self.root = root
        self.mount = root / "fsx"
        self.python = loop_python()
        self.launches: list[Launch] = []
        self._stack = contextlib.ExitStack()

    # -- set-up ------------------------------------------------------------------------------------------------
    def __enter__(self) -> World:
        try:
            return self._set_up()
        except BaseException:
            self._stack.close()
            raise

    def _set_up(self) -> World:
        from grpo_stack.render import job_spec

        from ..reward.reward_harness import ServiceProcess

        self.metrics_port = free_port()
        self.values = loop_values(self.mount, metrics_port=self.metrics_port)
        release = rendered(self.values)
        self.spec = job_spec(release)
        self.build_fixtures()
        config = reward_service_env(release)
        (self.root / "reward").mkdir(exist_ok=True)
        self.reward = self._stack.enter_context(ServiceProcess(config, self.root / "reward"))
        head_env = cpu_set.env(self.reward.url + "/score", str(self.python.parent), os.environ["PATH"])
        self.ray = LoopHead(self.python, HEAD_GPUS, {**clean_env(), **head_env})
        self._stack.callback(self.ray.stop)
        self.ray.start()
        self.scraper = Scraper(self.metrics_port).start()
        self._stack.callback(self.scraper.stop)
        return self

    def __exit__(self, *exc) -> None:
        self._stack.close()

    def build_fixtures(self) -> None:
        job = self.spec["job"]
        batch = job["verl"]["batch"]["trainBatchSize"]
        cmd = [str(self.python), str(HERE / "fixtures.py"), str(self.mount), job["model"]["path"],
               job["data"]["trainFiles"][0], job["data"]["valFiles"][0], "--shape", json.dumps(job["model"]["shape"]),
               "--train-rows", str(STEPS * batch), "--val-rows", "2"]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=clean_env())
        assert out.returncode == 0, out.stderr[-3000:]

    # -- launches ----------------------------------------------------------------------------------------------
    def spec_file(self, name: str, gpus: int | None = None) -> Path:
        from grpo_stack.render import job_spec

        spec = self.spec if gpus is None else job_spec(rendered(loop_values(self.mount, gpus, self.metrics_port)))
        path = self.root / f"{name}.json"
        path.write_text(json.dumps(spec))
        return path

    def start(self, name: str, *, gpus: int | None = None, events: dict | None = None,
              spec: Path | None = None) -> Launch:
        """`spec`: a job spec file of other values (else the World's, on `gpus`)."""
        spec = spec or self.spec_file(name, gpus)
        argv = [str(self.python), str(HERE / "submit_cpu.py"), "--spec", str(spec), "--address", self.ray.address,
                "--follow"]
        env = {**clean_env(), "PYTHONPATH": f"{REPO_ROOT / 'tools'}:{HERE}"}
        if events:
            env["LOOP_EVENTS"] = json.dumps(events)
        launch = Launch(name, argv, self.root / f"{name}.log")
        launch.started = time.monotonic()
        self.scraper.launch = name
        launch.proc = subprocess.Popen(argv, stdout=launch.log_path.open("wb"), stderr=subprocess.STDOUT, env=env,
                                       cwd=self.root)
        self.launches.append(launch)
        return launch

    def wait(self, launch: Launch, timeout: float) -> Launch:
        try:
            launch.rc = launch.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            launch.proc.kill()
            launch.rc = launch.proc.wait()
            launch.events.append(f"timed out after {timeout} s")
        launch.elapsed = time.monotonic() - launch.started
        return launch

    def run(self, name: str, timeout: float = 300, **kw) -> Launch:
        return self.wait(self.start(name, **kw), timeout)

    # -- checkpoints -------------------------------------------------------------------------------------------
    @property
    def checkpoints(self) -> Path:
        return self.mount / self.spec["job"]["trainer"]["checkpointDir"]

    def tracker(self) -> int | None:
        with contextlib.suppress(OSError, ValueError):
            return int((self.checkpoints / TRACKER).read_text().strip())
        return None

    def step_dirs(self) -> list[int]:
        if not self.checkpoints.is_dir():
            return []
        return sorted(int(p.name.rsplit("_", 1)[1]) for p in self.checkpoints.glob("global_step_*") if p.is_dir())

    def rollouts(self) -> dict[int, list[dict]]:
        """step -> the samples verl dumped for it (trainer.rollout_data_dir: <step>.jsonl)."""
        out = {}
        for path in sorted((self.mount / "rollouts").glob("*.jsonl")):
            out[int(path.stem)] = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        return out

    # -- events from outside -----------------------------------------------------------------------------------
    def kill_during_step(self, launch: Launch, step: int, timeout: float) -> tuple[int, list[int]]:
        """SIGKILL the run's training processes (its driver, its actors and their children) while step `step` runs:
        the launch must hold that step (LOOP_EVENTS hold_at_step). Returns (tracker at the kill, pids)."""
        deadline = time.monotonic() + timeout
        while f"loop-event: holding step {step}" not in launch.text():
            if launch.proc.poll() is not None:
                raise AssertionError(f"{launch.name} ended before step {step}:\n{launch.tail()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"{launch.name}: step {step} not reached within {timeout} s:\n{launch.tail()}")
            time.sleep(1)
        tracker = self.tracker()
        pids = self.training_pids(launch)
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        launch.events.append(f"SIGKILL to {len(pids)} training processes during step {step} (tracker {tracker})")
        return tracker, pids

    def stop_job(self, launch: Launch) -> subprocess.CompletedProcess:
        """`ray job stop` (the real CLI, which waits until the job has stopped) of the launch's current Ray job."""
        job_ids = re.findall(r"^submit: Ray job id (\S+)", launch.text(), re.M)
        assert job_ids, f"{launch.name}: no Ray job submitted:\n{launch.tail()}"
        out = subprocess.run([str(self.python.parent / "ray"), "job", "stop", "--address", self.ray.address,
                              job_ids[-1]], text=True, capture_output=True, env=clean_env(), timeout=120)
        launch.events.append(f"ray job stop {job_ids[-1]}: exit {out.returncode}")
        return out

    def wait_for(self, launch: Launch, text: str, timeout: float) -> None:
        """Until `text` is in the launch's output (an AssertionError when it ends or times out first)."""
        deadline = time.monotonic() + timeout
        while text not in launch.text():
            if launch.proc.poll() is not None:
                raise AssertionError(f"{launch.name} ended before {text!r}:\n{launch.tail()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"{launch.name}: no {text!r} within {timeout} s:\n{launch.tail()}")
            time.sleep(1)

    def step_file(self, launch: Launch) -> Path:
        """The step file verl's `file` tracker writes for the launch's (first) Ray job, on the run's storage."""
        from grpo_stack.supervise import logstore

        return logstore.steps_path(self.checkpoints, launch.job_id() or "none")

    def step_records(self, launch: Launch) -> dict[int, dict]:
        """step -> the metrics verl's `file` tracker wrote for it (training steps only)."""
        out = {}
        path = self.step_file(launch)
        for line in path.read_text().splitlines() if path.exists() else []:
            with contextlib.suppress(ValueError):
                record = json.loads(line)
                if "training/global_step" in record["data"]:
                    out[record["step"]] = record["data"]
        return out

    def wait_for_record(self, launch: Launch, step: int, timeout: float) -> dict | None:
        """Poll the launch's step file until it holds a record at `step` (0: verl's validation before training; -1:
        until the file exists, {} then)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            path = self.step_file(launch) if launch.job_id() else None
            if path is not None and path.exists():
                if step < 0:
                    return {}
                for line in path.read_text().splitlines():
                    with contextlib.suppress(ValueError):
                        record = json.loads(line)
                        if record.get("step") == step:
                            return record["data"]
            if launch.proc.poll() is not None:
                return None
            time.sleep(0.2)
        return None

    def wait_for_text(self, launch: Launch, text: str, timeout: float) -> float | None:
        """Poll the launch's output for `text`: seconds waited, or None at the timeout or the launch's end."""
        start = time.monotonic()
        while text not in launch.text():
            if launch.proc.poll() is not None or time.monotonic() - start > timeout:
                return None
            time.sleep(0.5)
        return time.monotonic() - start

    def signal_training(self, roots: list[int], sig: int) -> list[int]:
        """`sig` to the given driver and actor pids and every process they started now; the pids signalled."""
        pids = sorted(set(roots) | {d for pid in roots for d in descendants(pid)})
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        return pids

    def training_roots(self, launch: Launch) -> list[int]:
        """The run's driver and actors, from Ray's state API."""
        out = self.ray.helper("pids", launch.job_id() or "")
        assert out.returncode == 0, out.stderr[-3000:]
        roots = json.loads(out.stdout.strip().splitlines()[-1])
        assert roots, f"no processes found for job {launch.job_id()}"
        return roots

    def training_pids(self, launch: Launch) -> list[int]:
        """The run's driver and actors (Ray's state API), with every process they started."""
        roots = self.training_roots(launch)
        return sorted(set(roots) | {d for pid in roots for d in descendants(pid)})


def descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                stat = Path(f"/proc/{entry}/stat").read_text()
                ppid = int(stat.rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(entry))
    out, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in out:
                out.add(child)
                todo.append(child)
    return out


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")
