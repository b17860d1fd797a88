"""The tests' transport for grpo-run's in-pod half: `python -m grpo_stack.runctl.inpod` as a local process, with the
job.json and storage a head pod would have mounted. Only the transport differs from the head pod's exec."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from grpo_stack.localcluster.ports import free_port


class LocalExecutor:
    def __init__(self, spec: dict, storage: Path, workdir: Path, ray_address: str | None = None):
        spec = json.loads(json.dumps(spec))
        spec["storage"]["mountPath"] = str(storage)  # the shared volume, here a local directory
        workdir.mkdir(parents=True, exist_ok=True)
        self.spec_path = workdir / "job.json"
        self.spec_path.write_text(json.dumps(spec))
        # No Ray head unless given: a closed loopback port, as a head whose dashboard is down.
        self.ray_address = ray_address or f"http://127.0.0.1:{free_port()}"
        self.calls: list[list[str]] = []

    def inpod(self, args: list[str], sink: Callable[[str], None] | None = None) -> tuple[int, str, str]:
        self.calls.append(args)
        env = {**os.environ, "GRPO_JOB_SPEC": str(self.spec_path), "RAY_ADDRESS": self.ray_address}
        proc = subprocess.run([sys.executable, "-m", "grpo_stack.runctl.inpod", *args], env=env, capture_output=True,
                              text=True, timeout=180, check=False)
        if sink is not None:
            sink(proc.stdout)
        return proc.returncode, proc.stdout, proc.stderr
