"""grpo-lint as users run it: exit codes, output formats, suppression, rules/explain."""

from __future__ import annotations

import json

import pytest
from grpo_stack.cli.lint import main
from grpo_stack.lint.rules import RULES
from grpo_stack.paths import REPO_ROOT

from tests.lint.fixtures import FIXTURES

BASE = str(REPO_ROOT / "values" / "qwen3-235b.yaml")
# The 235B run's evaluation release (vLLM on): GRPO502, training needs 2048 + 24576.
EVAL_OVERLAY = str(REPO_ROOT / "values" / "eval" / "eval.yaml")
SHORT_CONTEXT = "vllm:\n  maxModelLen: 12288\n"


def run(capsys, *argv, env=None, monkeypatch=None):
    code = main(list(argv))
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err
    return code, out.out, out.err


@pytest.fixture
def short_context(tmp_path):
    p = tmp_path / "short.yaml"
    p.write_text(SHORT_CONTEXT)
    return str(p)


def test_shipped_values_are_clean(capsys):
    """Every shipped values file lints clean (what CI runs on values/*.yaml)."""
    code, out, _ = run(capsys, *sorted(str(p) for p in (REPO_ROOT / "values").glob("*.yaml")))
    assert code == 0, out


def test_error_finding_exits_1_and_names_file_line_key(capsys, short_context):
    code, out, _ = run(capsys, "--base", BASE, "--base", EVAL_OVERLAY, short_context)
    assert code == 1
    assert f"{short_context}:2:3: GRPO502 [error] vllm.maxModelLen: vllm.maxModelLen 12288 < training budget" in out
    assert "26624" in out
    assert "fix: set vllm.maxModelLen >= 26624" in out


def test_warning_only_passes_unless_strict(capsys, tmp_path):
    """A warning alone (staging another model than the preset describes) passes, and fails with --strict."""
    p = tmp_path / "stage.yaml"
    p.write_text("fsx-utils:\n  model:\n    repo: Qwen/Qwen3-4B\n")
    base = str(REPO_ROOT / "values" / "qwen3-8b.yaml")
    assert run(capsys, "--base", base, str(p))[0] == 0
    code, out, _ = run(capsys, "--strict", "--base", base, str(p))
    assert code == 1 and "GRPO561 [warning]" in out


def test_json_format(capsys, short_context):
    code, out, _ = run(capsys, "--format", "json", "--base", BASE, "--base", EVAL_OVERLAY, short_context)
    doc = json.loads(out)
    assert code == 1 and doc["input_errors"] == []
    f = next(f for f in doc["findings"] if f["code"] == "GRPO502")
    assert (f["file"], f["line"], f["column"], f["key_path"]) == (short_context, 2, 3, "vllm.maxModelLen")
    assert f["name"] == "token-budget" and f["severity"] == "error" and f["remediation"]


def test_sarif_format(capsys, short_context):
    """SARIF 2.1.0 as GitHub code scanning reads it: driver rules, one result per finding with a region."""
    _, out, _ = run(capsys, "--format", "sarif", "--base", BASE, "--base", EVAL_OVERLAY, short_context)
    doc = json.loads(out)
    assert doc["version"] == "2.1.0" and doc["$schema"].endswith("sarif-2.1.0.json")
    run0 = doc["runs"][0]
    assert {r["id"] for r in run0["tool"]["driver"]["rules"]} >= set(RULES)
    result = next(r for r in run0["results"] if r["ruleId"] == "GRPO502")
    loc = result["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == short_context and loc["region"] == {"startLine": 2, "startColumn": 3}
    assert result["level"] == "error"


def test_github_format_chosen_under_actions(capsys, short_context, monkeypatch):
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    _, out, _ = run(capsys, "--base", BASE, "--base", EVAL_OVERLAY, short_context)
    assert f"::error file={short_context},line=2,col=3,title=GRPO502 token-budget::" in out


def test_no_colour_when_not_a_tty(capsys, short_context):
    _, out, _ = run(capsys, "--base", BASE, "--base", EVAL_OVERLAY, short_context)
    assert "\033[" not in out


def test_inline_suppression_needs_a_reason(capsys, tmp_path):
    with_reason = tmp_path / "a.yaml"
    with_reason.write_text("vllm:\n  maxModelLen: 12288  # grpo-lint: disable=GRPO502 short-context eval only\n")
    code, out, _ = run(capsys, "--base", BASE, str(with_reason))
    assert code == 0 and "GRPO502" not in out
    no_reason = tmp_path / "b.yaml"
    no_reason.write_text("vllm:\n  maxModelLen: 12288  # grpo-lint: disable=GRPO502\n")
    code, out, _ = run(capsys, "--base", BASE, str(no_reason))
    assert code == 1 and "GRPO000" in out and "GRPO502" in out


def test_config_suppression(capsys, tmp_path, short_context):
    cfg = tmp_path / "lint.yaml"
    cfg.write_text("disable:\n  - code: GRPO502\n    reason: eval server sized for short prompts\n")
    assert run(capsys, "--config", str(cfg), "--base", BASE, "--base", EVAL_OVERLAY, short_context)[0] == 0
    cfg.write_text("disable:\n  - code: GRPO502\n")
    code, out, _ = run(capsys, "--config", str(cfg), "--base", BASE, "--base", EVAL_OVERLAY, short_context)
    assert code == 1 and "GRPO000" in out


def test_rules_and_explain(capsys):
    code, out, _ = run(capsys, "rules")
    assert code == 0 and all(c in out for c in RULES)
    code, out, _ = run(capsys, "explain", "GRPO401")
    assert code == 0 and "ray.io/node-type" in out and "## Fix" in out
    code, out, _ = run(capsys, "explain", "ray-selector")
    assert code == 0 and "GRPO401" in out
    code, _, err = run(capsys, "explain", "GRPO999")
    assert code == 2 and "no such rule" in err


def test_directory_and_manifests(capsys, tmp_path):
    """A directory is expanded; plain manifests are linted with the object rules."""
    manifest = (FIXTURES / "GRPO401" / "bad-manifest-unprefixed-label.yaml").read_text()
    (tmp_path / "sandbox.yaml").write_text(manifest)
    code, out, _ = run(capsys, str(tmp_path))
    assert code == 1 and "GRPO401" in out and "ray-node-type" in out


def test_kuberay_crd_must_exist(capsys, short_context):
    code, _, err = run(capsys, "--kuberay-crd", "/nonexistent.json", short_context)
    assert code == 2 and "no such file" in err
