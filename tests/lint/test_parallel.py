"""Values files linted in worker processes (lint/parallel.py) give the same output as one process."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from grpo_stack.cli.lint import guarded
from grpo_stack.lint import parallel
from grpo_stack.paths import REPO_ROOT

from tests.lint.fixtures import FIXTURES

GRPO_LINT = str(Path(sys.executable).parent / "grpo-lint")
VALUES = sorted(str(p) for p in (REPO_ROOT / "values").glob("*.yaml"))


@pytest.fixture
def inputs(tmp_path) -> list[str]:
    """Values files with an error finding, a warning, an inline suppression, a schema error and a build
    error; a clean one; an unreadable file; two manifest files (one release) with findings; the shipped ones."""
    files = {
        "short.yaml": "global:\n  components:\n    vllm: true\nvllm:\n  maxModelLen: 12288\n",
        "stage.yaml": "fsx-utils:\n  model:\n    repo: Qwen/Qwen3-4B\n",
        "suppressed.yaml": "global:\n  components:\n    vllm: true\nvllm:\n"
                           "  maxModelLen: 12288  # grpo-lint: disable=GRPO502 evaluation only\n",
        "schema.yaml": "global:\n  cluster:\n    efaPerNode: -3\n",
        "clean.yaml": "global:\n  storage:\n    mountPath: /fsx\n",
        "broken.yaml": "a: [\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    shutil.copy(FIXTURES / "GRPO850" / "bad-mixed-namespaces.yaml", tmp_path / "m1.yaml")
    shutil.copy(FIXTURES / "GRPO851" / "bad-envsubst-template.yaml", tmp_path / "m2.yaml")
    return [*(str(tmp_path / n) for n in files), str(tmp_path / "m1.yaml"), str(tmp_path / "m2.yaml"), *VALUES]


def lint(*argv: str) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if k != "GRPO_LINT_JOBS"}
    proc = subprocess.run([GRPO_LINT, "--no-cache", *argv], capture_output=True, text=True, env=env, timeout=600,
                          check=False)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_worker_processes_print_what_one_process_prints(inputs, fmt):
    """A pool that dropped, reordered or altered one file's result would make grpo-lint lie about that file:
    the same files linted in one process and in 2 and 3 workers print the same bytes and exit the same way."""
    base = str(REPO_ROOT / "values" / "qwen3-235b.yaml")
    one = lint("--jobs", "1", "--format", fmt, "--base", base, *inputs)
    assert one[0] == 2 and all(code in one[1] for code in ("GRPO502", "GRPO561", "GRPO850", "GRPO851"))
    assert one == lint("--jobs", "2", "--format", fmt, "--base", base, *inputs)
    assert one == lint("--jobs", "3", "--format", fmt, "--base", base, *inputs)


def test_default_uses_workers_and_agrees():
    """Without --jobs the shipped files are linted in worker processes on a machine with 2+ cores, with the
    same result (the timing comparison lives in bench/lint_vs_checkov.py)."""
    assert lint(*VALUES) == lint("--jobs", "1", *VALUES)


def test_no_fork_once_helm_is_loaded(monkeypatch):
    """A process that has loaded Helm's Go engine cannot be forked safely: it lints in-process."""
    monkeypatch.setitem(sys.modules, "helm_python", object())
    assert parallel.default_jobs(6) == 1
    calls = []
    results = parallel.process_map(4)(lambda files: calls.append(files) or files, [["a"], ["b"]])
    assert list(results) == [["a"], ["b"]] and calls == [["a"], ["b"]]


def _fail(_):
    raise ValueError("boom")


def test_a_worker_error_is_one_line_naming_where(capsys):
    """An internal error inside a worker still ends as exit 3 and one line naming the worker's file and line,
    not the pool's."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    def run():
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) as pool:
            list(pool.map(_fail, [1]))

    assert guarded("grpo-lint", run, debug=False) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "ValueError: boom at test_parallel.py:" in err, err
