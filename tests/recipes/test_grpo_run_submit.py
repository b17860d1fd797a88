"""`grpo-run submit` is run-on-cluster.sh (one submit, not a second implementation): the same calls through the
recording kubectl shim (not a cluster) and the same in-pod dry run; its own usage errors exit 2 before anything."""

from __future__ import annotations

from tests.recipes.test_run_on_cluster import NAMESPACE, RELEASE, VENV_BIN, cluster_state, run_recipe


def test_submit_runs_the_recipe(tmp_path):
    state, spec = cluster_state("qwen3-8b.yaml")
    (tmp_path / "script").mkdir()
    (tmp_path / "cli").mkdir()
    script, script_calls = run_recipe(tmp_path / "script", state, spec, "--dry-run")
    cli, cli_calls = run_recipe(tmp_path / "cli", state, spec, "--dry-run",
                                command=[str(VENV_BIN / "grpo-run"), "submit", RELEASE, "-n", NAMESPACE])
    assert cli.returncode == script.returncode == 0, cli.stderr
    assert "submit: dry run, nothing submitted" in cli.stdout
    assert cli.stdout.replace(str(tmp_path / "cli"), "X") == script.stdout.replace(str(tmp_path / "script"), "X")
    assert len(cli_calls) == len(script_calls)


def test_submit_needs_a_namespace(tmp_path):
    state, spec = cluster_state("qwen3-8b.yaml")
    (tmp_path / "calls.log").write_text("")  # the shim's record: stays empty
    proc, calls = run_recipe(tmp_path, state, spec, command=[str(VENV_BIN / "grpo-run"), "submit", RELEASE])
    assert proc.returncode == 2 and "submit needs -n/--namespace" in proc.stderr
    assert not calls
