"""grpo-lint and grpo-render take the values flags `helm install` takes, with one meaning in both: `-f` layers
files into one release, each positional file is a release of its own over them, and `--set*` flags apply last.
A `--set` reaches every check a file does, and what it renders is what the real `helm template` renders with the
same flags on the shipped chart."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from grpo_stack.paths import CHART_DIR, VALUES_DIR

from tests.chart.test_helm_cli import by_source
from tests.conftest import NAMESPACE, RELEASE

BIN = Path(sys.executable).parent
BASE = str(VALUES_DIR / "qwen3-8b.yaml")


def tool(name: str, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / name), *args], capture_output=True, text=True, timeout=300, check=False, env=env)


@pytest.fixture
def overlay(tmp_path) -> Path:
    """A partial file: a release only when layered over a whole one."""
    path = tmp_path / "overlay.yaml"
    path.write_text("global:\n  cluster:\n    nodes: 2\n")
    return path


@pytest.mark.parametrize("name", ["grpo-lint", "grpo-render"])
def test_f_layers_one_release_and_positional_files_are_each_their_own(name, overlay):
    layered = tool(name, "--no-cache" if name == "grpo-lint" else "--release=grpo", "-f", BASE, "-f", str(overlay))
    assert layered.returncode == 0, layered.stdout + layered.stderr
    over = tool(name, "--no-cache" if name == "grpo-lint" else "--release=grpo", "-f", BASE, str(overlay))
    assert over.returncode == 0, over.stdout + over.stderr
    independent = tool(name, "--no-cache" if name == "grpo-lint" else "--release=grpo", BASE, str(overlay))
    assert independent.returncode == 2  # the overlay alone states no run
    assert "overlay.yaml" in independent.stdout + independent.stderr
    assert "qwen3-8b.yaml" not in independent.stdout + independent.stderr


def test_render_prints_each_release_under_its_values_line(tmp_path):
    second = str(VALUES_DIR / "qwen3-30b.yaml")
    proc = tool("grpo-render", BASE, second)
    assert proc.returncode == 0, proc.stderr
    assert re.findall(r"^# Values: (.+)$", proc.stdout, flags=re.MULTILINE) == [BASE, second]
    written = tool("grpo-render", BASE, second, "-o", str(tmp_path / "out"))
    assert written.returncode == 0, written.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["qwen3-30b", "qwen3-8b"]
    assert tool("grpo-render", BASE, second, "--job").returncode == 2


def test_a_bad_set_value_is_an_input_error_at_the_argument_and_key():
    argument = "global.job.rollout.samplesPerPrompt=abc"
    for name in ("grpo-lint", "grpo-render"):
        proc = tool(name, BASE, "--set", argument)
        assert proc.returncode == 2, name
        assert f"--set {argument}:1:1: global.job.rollout.samplesPerPrompt: 'abc' is not of type 'integer'" \
            in proc.stdout + proc.stderr, name


def test_a_set_into_a_scalar_is_refused_as_helm_refuses_it(helm_bin, helm_env):
    proc = tool("grpo-lint", "--no-cache", BASE, "--set", "global.job.framework.name=verl")
    assert proc.returncode == 2
    assert "global.job.framework is a string in the values below, not a map" in proc.stdout
    helm = subprocess.run([str(helm_bin), "template", RELEASE, str(CHART_DIR), "-f", BASE, "--set",
                           "global.job.framework.name=verl"], capture_output=True, text=True, env=helm_env,
                          timeout=120, check=False)
    assert helm.returncode != 0 and "interface conversion" in helm.stderr


def test_a_set_meets_the_rules_a_file_meets(tmp_path):
    """The same value from a file and from --set gives the same finding, at the file's line or the argument."""
    as_file = tmp_path / "freq.yaml"
    as_file.write_text("global:\n  job:\n    trainer:\n      saveFreq: 0\n")
    from_file = tool("grpo-lint", "--no-cache", "-f", BASE, str(as_file))
    from_set = tool("grpo-lint", "--no-cache", BASE, "--set", "global.job.trainer.saveFreq=0")
    assert from_file.returncode == from_set.returncode == 2
    message = "global.job.trainer.saveFreq: 0 is not allowed here"
    assert f"{as_file}:4:7: {message}" in from_file.stdout
    assert f"--set global.job.trainer.saveFreq=0:1:1: {message}" in from_set.stdout


def test_the_lint_cache_never_answers_for_a_different_set(tmp_path):
    env = {**__import__("os").environ, "GRPO_LINT_CACHE_DIR": str(tmp_path / "cache")}
    assert tool("grpo-lint", BASE, env=env).returncode == 0
    assert tool("grpo-lint", BASE, "--set", "global.job.trainer.saveFreq=0", env=env).returncode == 2
    assert tool("grpo-lint", BASE, "--set", "global.job.trainer.saveFreq=5", env=env).returncode == 0
    assert tool("grpo-lint", BASE, "--set", "global.job.trainer.saveFreq=0", env=env).returncode == 2


def test_set_file_names_the_flag_and_the_missing_file(tmp_path):
    missing = tmp_path / "missing.sh"
    proc = tool("grpo-lint", "--no-cache", BASE, "--set-file", f"raycluster.x={missing}")
    assert proc.returncode == 2
    assert f"--set-file raycluster.x={missing}" in proc.stdout and "missing.sh: no such file" in proc.stdout


FLAGS = ["--set", "global.cluster.nodes=2,raycluster.nccl.debug=INFO",
         "--set-string", "global.job.trainer.experiment=0123",
         "--set-json", 'global.job.data.trainFiles=["data/x/train.parquet"]',
         "--set-literal", "global.job.trainer.project=a,b"]


def test_render_with_set_flags_equals_helm_template_with_them(helm_bin, helm_env, tmp_path):
    ours = tool("grpo-render", "-f", BASE, *FLAGS, "--release", RELEASE, "--namespace", NAMESPACE)
    assert ours.returncode == 0, ours.stderr
    helm = subprocess.run([str(helm_bin), "template", RELEASE, str(CHART_DIR), "-f", BASE, *FLAGS,
                           "--namespace", NAMESPACE], capture_output=True, text=True, env=helm_env, timeout=120,
                          check=False)
    assert helm.returncode == 0, helm.stderr
    theirs = {t: docs for t, docs in by_source(helm.stdout).items() if not t.endswith("NOTES.txt")}
    assert by_source(ours.stdout) == theirs
    cluster = next(d for docs in theirs.values() for d in docs if d.get("kind") == "RayCluster")
    assert cluster["spec"]["workerGroupSpecs"][0]["replicas"] == 2  # the flags did reach the chart
    assert yaml.safe_dump(theirs).count("data/x/train.parquet") >= 1


def test_job_of_a_release_without_training_is_an_input_error():
    """An evaluation release renders no job: `--job` says so (it was an internal error, exit 3)."""
    proc = tool("grpo-render", "-f", BASE, "-f", str(VALUES_DIR / "eval" / "eval.yaml"), "--job")
    assert proc.returncode == 2, proc.stderr
    assert "eval.yaml: --job:" in proc.stderr and "runs no training job" in proc.stderr
