"""grpo-render --job --memory: the per-GPU breakdown by phase and term."""

from __future__ import annotations

import json

from grpo_stack.cli.render import main
from grpo_stack.paths import REPO_ROOT

VALUES = str(REPO_ROOT / "values" / "qwen3-30b.yaml")


def test_text_names_every_phase_and_term(capsys):
    assert main([VALUES, "--job", "--memory"]) == 0
    out = capsys.readouterr().out
    for phase in ("rollout [colocated]", "log-prob [colocated]", "train [colocated]", "weight-sync [colocated]"):
        assert phase in out
    assert "KV cache" in out and "GiB" in out


def test_json_phases_add_up(capsys):
    assert main([VALUES, "--job", "--memory", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert not data["oom"]
    for phase in data["phases"]:
        assert abs(sum(t["gib"] for t in phase["terms"]) - phase["gib"]) < 0.05
    assert data["peak"]["gib"] == max(p["gib"] for p in data["phases"])


def test_memory_without_job_is_a_usage_error(capsys):
    assert main([VALUES, "--memory"]) == 2
    assert "--memory needs --job" in capsys.readouterr().err
