"""The pre-commit hook (.pre-commit-hooks.yaml) as pre-commit 4.7.0 itself reads it: its manifest loader
validates the file, and its own file classifier picks, from a repository's tracked files, only values files and
manifests: never CI workflows, pre-commit's or grpo-lint's config, or a chart's metadata and templates.
Where the check stops: pre-commit's install of the hook (`pip install .` at the root) is not run here; the
installed package is tests/packaging/test_wheel.py's subject."""

from __future__ import annotations

import subprocess
from types import SimpleNamespace

import pytest
from grpo_stack.paths import REPO_ROOT

clientlib = pytest.importorskip("pre_commit.clientlib", reason="pre-commit is in requirements/dev.txt")
from pre_commit.commands.run import Classifier  # noqa: E402

CHECKED = ["values/my-run.yaml", "values/eval/eval.yml", "deploy/raycluster.yaml", "manifests/pod.yml"]
SKIPPED = [".github/workflows/ci.yml", ".github/dependabot.yml", ".pre-commit-config.yaml", ".grpo-lint.yaml",
           ".gitlab-ci.yml", "charts/mine/Chart.yaml", "charts/mine/templates/job.yaml", "README.md"]


def test_hook_selects_only_values_files_and_manifests(tmp_path):
    (hook,) = clientlib.load_manifest(str(REPO_ROOT / ".pre-commit-hooks.yaml"))
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    for name in CHECKED + SKIPPED:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("a: 1\n")
    subprocess.run(["git", "-C", str(tmp_path), "add", "-A"], check=True)
    tracked = subprocess.run(["git", "-C", str(tmp_path), "ls-files"], check=True, capture_output=True,
                             text=True).stdout.split()
    import os

    here = os.getcwd()
    os.chdir(tmp_path)  # pre-commit classifies paths relative to the repository root
    try:
        classifier = Classifier.from_config(tracked, "", "^$")
        picked = sorted(classifier.filenames_for_hook(SimpleNamespace(**hook)))
    finally:
        os.chdir(here)
    assert picked == sorted(CHECKED)
