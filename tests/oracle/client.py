"""Client for the oracle workers. Stdlib only: runs in the main test venv, not in the oracle venv.

    with OracleProcess() as verl:                     # verl_oracle_worker.py
        results = verl.ask([{"id": "a", "config_name": "ppo_trainer", "overrides": [...]}])
    with OracleProcess(MCORE_WORKER) as mcore:        # mcore_oracle_worker.py
        results = mcore.ask([{"id": "b", "transformer": {...}, "microbatches": None}])

The worker process is started once per context (verl's import costs ~6 s) and answers one JSON line per case.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Self

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent.parent
VERL_WORKER = HERE / "verl_oracle_worker.py"
MCORE_WORKER = HERE / "mcore_oracle_worker.py"
FAKEMODEL_DIR = HERE / "fakemodel"
SETUP_SCRIPT = HERE / "setup_oracle_venv.sh"
MARKER_NAME = ".grpo-oracle-installed"
SETUP_HINT = f"create it with: bash {SETUP_SCRIPT.relative_to(REPO_ROOT)} (about 2 minutes, ~2 GB)"


class OracleError(RuntimeError):
    """The worker died or broke the one-line-per-case protocol."""


def oracle_venv() -> Path:
    # This module is also loaded by path (tests/job/cases.py), so tests/tier_venvs.py is loaded the same way.
    spec = importlib.util.spec_from_file_location("grpo_tier_venvs", REPO_ROOT / "tests" / "tier_venvs.py")
    tier_venvs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tier_venvs)
    return tier_venvs.venv_path("oracle")


def oracle_python() -> Path | None:
    """The oracle venv's interpreter, or None when the venv was not (completely) installed."""
    venv = oracle_venv()
    python = venv / "bin" / "python"
    if python.exists() and (venv / MARKER_NAME).exists():
        return python
    return None


class OracleProcess:
    """One long-lived worker subprocess speaking JSONL over stdin/stdout."""

    def __init__(self, worker: Path = VERL_WORKER, python: Path | None = None, stderr=None):
        self.worker = Path(worker)
        self.python = python or oracle_python()
        if self.python is None:
            raise OracleError(f"oracle venv not found at {oracle_venv()}; {SETUP_HINT}")
        self._stderr = stderr if stderr is not None else sys.stderr
        self._proc: subprocess.Popen | None = None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def start(self) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "TOKENIZERS_PARALLELISM": "false"}
        self._proc = subprocess.Popen(
            [str(self.python), str(self.worker)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            bufsize=1,
            env=env,
            cwd=str(REPO_ROOT),
        )

    def close(self) -> None:
        if self._proc is None:
            return
        if self._proc.stdin:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._proc = None

    def ask(self, cases: list[dict]) -> list[dict]:
        """Send all cases, return one result per case, in order."""
        if self._proc is None:
            raise OracleError("worker not started; use `with OracleProcess() as oracle:`")
        # Write from a thread so a long batch cannot deadlock on full pipes.
        writer = threading.Thread(target=self._write, args=(list(cases),), daemon=True)
        writer.start()
        results = [self._read_one() for _ in cases]
        writer.join()
        return results

    def ask_one(self, case: dict) -> dict:
        return self.ask([case])[0]

    def _write(self, cases: list[dict]) -> None:
        for case in cases:
            self._proc.stdin.write(json.dumps(case) + "\n")
        self._proc.stdin.flush()

    def _read_one(self) -> dict:
        line = self._proc.stdout.readline()
        if not line:
            code = self._proc.poll()
            raise OracleError(f"oracle worker {self.worker.name} exited (code {code}) before answering")
        return json.loads(line)
