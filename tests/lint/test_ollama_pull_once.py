"""GRPO871 reports a model an Ollama script pulls and then runs once: `ollama run` pulls only what `ollama pull` has
not, so the two commands are one download of one tag (a labelled corpus counted the second finding as noise)."""

from __future__ import annotations

from pathlib import Path

from grpo_stack.lint.release import lint_manifests

FIXTURE = Path(__file__).parent / "rules" / "fixtures" / "GRPO871" / "bad-ollama-tags.yaml"


def test_pull_then_run_is_one_finding():
    found = [f for f in lint_manifests(str(FIXTURE)).findings if f.code == "GRPO871" and "qwen3:4b" in f.message]
    assert len(found) == 1, [f.message for f in found]
