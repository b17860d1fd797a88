"""The real local Ray head the recipe tests submit to, one for the package: its driver imports a stand-in
`verl.trainer.main_ppo` that records the arguments it received, exits 3 when the experiment is named "fail-3", and
runs the supervised-submit stand-in trainer (supervised_trainer.py) when it is named "supervised"."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

VENV_BIN = Path(sys.executable).parent
SUPERVISED_TRAINER = Path(__file__).with_name("supervised_trainer.py")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="package")
def fake_verl(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("fake-verl")
    pkg = root / "verl" / "trainer"
    pkg.mkdir(parents=True)
    (root / "verl" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "main_ppo.py").write_text(
        "import json, sys\nprint('GRPO-ARGV ' + json.dumps(sys.argv[1:]), flush=True)\n"
        "if 'trainer.experiment_name=supervised' in sys.argv:\n"
        f"    import runpy; sys.argv = [sys.argv[0], *sys.argv[1:]]; runpy.run_path({str(SUPERVISED_TRAINER)!r})\n"
        "sys.exit(3 if 'trainer.experiment_name=fail-3' in sys.argv else 0)\n"
    )
    return root


@pytest.fixture(scope="package")
def ray_head(fake_verl, tmp_path_factory):
    """A real Ray head on loopback; the stand-in verl is on its PYTHONPATH so the driver can import it."""
    port, dash = free_port(), free_port()
    # Every port the head would otherwise take at its fixed default (client server 10001, agent 52365, ...) is
    # picked free, so another Ray on the machine (a developer's, another tier's) neither blocks nor is reached.
    own_ports = [f"--{name}={free_port()}" for name in (
        "ray-client-server-port", "dashboard-agent-listen-port", "dashboard-agent-grpc-port", "metrics-export-port",
        "runtime-env-agent-port", "node-manager-port", "object-manager-port")]
    env = {**os.environ, "PYTHONPATH": str(fake_verl), "RAY_USAGE_STATS_ENABLED": "0",
           "PATH": f"{VENV_BIN}:{os.environ['PATH']}"}
    # Ray's socket paths must stay short (AF_UNIX's 107 bytes): a temp dir of our own under /tmp, not pytest's
    # (longer under each test process's own base directory).
    temp = Path(tempfile.mkdtemp(prefix="rr", dir="/tmp"))
    # --block in its own process group, ended by signalling that group: `ray stop` would end every Ray on the machine.
    head = subprocess.Popen([str(VENV_BIN / "ray"), "start", "--head", "--block", f"--port={port}",
                             "--node-ip-address=127.0.0.1", f"--dashboard-port={dash}", "--dashboard-host=127.0.0.1",
                             "--num-cpus=4", "--num-gpus=8", "--include-dashboard=true", "--disable-usage-stats",
                             f"--temp-dir={temp}", *own_ports],
                            env=env, stdout=(temp / "head.log").open("wb"), stderr=subprocess.STDOUT,
                            start_new_session=True)
    address = f"http://127.0.0.1:{dash}"
    # Ready means a job can be submitted: the head's job agent registers after the dashboard answers `job list`
    # (a minute or more on a loaded machine), and until then every submit is refused with "No available agent".
    deadline = time.time() + 240
    while time.time() < deadline:
        if subprocess.run([str(VENV_BIN / "ray"), "job", "submit", "--address", address, "--", "true"],
                          capture_output=True, env=env, timeout=120).returncode == 0:
            break
        time.sleep(2)
    else:
        os.killpg(head.pid, signal.SIGKILL)
        raise RuntimeError("the local Ray head accepted no job within 240 s:\n"
                           + (temp / "head.log").read_text(errors="replace")[-3000:])
    yield address, env
    os.killpg(head.pid, signal.SIGTERM)
    try:
        head.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(head.pid, signal.SIGKILL)
        head.wait(timeout=30)
    shutil.rmtree(temp, ignore_errors=True)
