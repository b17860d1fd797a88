"""Rule categories and selection (`--select` / `--ignore` by category, code, prefix or name), and how the pod
hardening checks report on foreign manifests (one warning per pod) versus the chart's own output (each rule)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
from grpo_stack.cli.lint import main
from grpo_stack.lint.rules import CATEGORIES, RULES
from grpo_stack.lint.rules.pod_hardening import FOLDED
from grpo_stack.paths import REPO_ROOT, chart_dir

FOLDED_CODES = {r.CODE for r in FOLDED}

# A vLLM Deployment as another project writes it: no Pod Security settings at all, a bare-name URL to its own
# Service, a pinned image. Two pod templates (the server and a warm-up Job).
FOREIGN = """apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm, namespace: serve}
spec:
  selector:
    matchLabels: {app: vllm}
  template:
    metadata:
      labels: {app: vllm}
    spec:
      containers:
        - name: vllm
          image: "vllm/vllm-openai:v0.10.1"
          imagePullPolicy: IfNotPresent
          readinessProbe: {httpGet: {path: /health, port: 8000}}
---
apiVersion: v1
kind: Service
metadata: {name: vllm, namespace: serve}
spec:
  selector: {app: vllm}
  ports: [{port: 8000}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: warmup, namespace: serve}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: warmup
          image: "curlimages/curl:8.11.1"
          imagePullPolicy: IfNotPresent
          command: ["curl", "-fsS", "http://vllm:8000/health"]
"""


def lint(capsys, *argv) -> tuple[int, list[dict], str]:
    code = main(["--format", "json", "--no-cache", *argv])
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err
    return code, (json.loads(out.out)["findings"] if out.out.strip() else []), out.err


@pytest.fixture
def foreign(tmp_path) -> str:
    p = tmp_path / "vllm.yaml"
    p.write_text(FOREIGN)
    return str(p)


def test_every_rule_has_exactly_one_valid_category():
    for code, rule in RULES.items():
        assert isinstance(rule.CATEGORY, str) and rule.CATEGORY in CATEGORIES, (code, rule.CATEGORY)
    assert {r.CATEGORY for r in RULES.values()} == set(CATEGORIES)  # no category is empty


def test_manifest_mode_folds_hardening_into_one_warning_per_pod(capsys, foreign):
    """The foreign manifest is clean but for hardening: it passes (exit 0) with one GRPO809 warning per pod
    template naming every missing piece, and none of the per-rule errors."""
    code, findings, _ = lint(capsys, foreign)
    assert code == 0, findings
    assert not [f for f in findings if f["code"] in FOLDED_CODES]
    hardening = [f for f in findings if f["code"] == "GRPO809"]
    assert sorted(f["message"].split(" lacks")[0] for f in hardening) == ["Deployment vllm", "Job warmup"]
    assert all(f["severity"] == "warning" for f in hardening)
    server = next(f["message"] for f in hardening if f["message"].startswith("Deployment"))
    for piece in ("seccomp", "allowPrivilegeEscalation", "drop ALL", "service-account token", "NetworkPolicy"):
        assert piece in server, (piece, server)
    assert lint(capsys, "--strict", foreign)[0] == 1  # still a warning a strict run fails on


def test_config_holds_manifests_to_each_hardening_rule(capsys, foreign, tmp_path):
    config = tmp_path / "lint.yaml"
    config.write_text("pod-hardening: {each: true}\n")
    code, findings, _ = lint(capsys, "--config", str(config), foreign)
    assert code == 1 and {f["code"] for f in findings} >= FOLDED_CODES
    assert "GRPO809" not in {f["code"] for f in findings}
    config.write_text("pod-hardening: {each: yes-please}\n")
    code = main(["--no-cache", "--config", str(config), foreign])
    out = capsys.readouterr()
    assert code == 2 and "pod-hardening" in out.out + out.err and "Traceback" not in out.out + out.err


def test_chart_output_stays_held_to_every_hardening_rule(capsys, tmp_path):
    """Values mode: a chart whose containers may escalate privileges gets a GRPO811 error on each of its own
    rendered containers, not the folded warning. Checked on the real Helm render of a copied, altered chart."""
    chart = tmp_path / "grpo-stack"
    shutil.copytree(chart_dir(), chart)
    altered = 0
    for template in chart.rglob("*.tpl"):
        text = template.read_text()
        if "allowPrivilegeEscalation: false" in text:
            template.write_text(text.replace("allowPrivilegeEscalation: false", "allowPrivilegeEscalation: true"))
            altered += 1
    for template in chart.rglob("templates/*.yaml"):
        text = template.read_text()
        if "allowPrivilegeEscalation: false" in text:
            template.write_text(text.replace("allowPrivilegeEscalation: false", "allowPrivilegeEscalation: true"))
            altered += 1
    assert altered
    values = str(REPO_ROOT / "values" / "qwen3-8b.yaml")
    assert lint(capsys, "--select", "hardening", values)[:2] == (0, [])  # the shipped chart holds
    # A process of its own: --chart is read before the first render.
    done = subprocess.run([sys.executable, "-m", "grpo_stack.cli.lint", "--format", "json", "--no-cache",
                           "--chart", str(chart), "--select", "hardening", values],
                          capture_output=True, text=True, timeout=300)
    findings = json.loads(done.stdout)["findings"]
    codes = [f["code"] for f in findings]
    assert done.returncode == 1 and codes.count("GRPO811") > 1 and "GRPO809" not in codes, codes
    assert all(f["severity"] == "error" for f in findings if f["code"] == "GRPO811")


def test_select_and_ignore_take_categories_codes_prefixes_and_names(capsys, foreign):
    only = {f["code"] for f in lint(capsys, "--select", "hardening", foreign)[1]}
    assert only == {"GRPO809"}
    rest = {f["code"] for f in lint(capsys, foreign)[1]}
    assert "GRPO809" not in {f["code"] for f in lint(capsys, "--ignore", "hardening", foreign)[1]}
    assert {f["code"] for f in lint(capsys, "--ignore", "pod-hardening", foreign)[1]} == rest - {"GRPO809"}
    assert {f["code"] for f in lint(capsys, "--select", "GRPO8", "--ignore", "GRPO809", foreign)[1]} == \
        {c for c in rest if c.startswith("GRPO8")} - {"GRPO809"}
    assert lint(capsys, "--ignore", "ALL", foreign)[:2] == (0, [])


@pytest.mark.parametrize("arg", [["--select", "hardenin"], ["--ignore", "GRPO999"], ["--select", "GRPO8,bogus"],
                                 ["--ignore", "XYZ1"]])
def test_unknown_selector_is_a_usage_error(capsys, foreign, arg):
    code, _, err = lint(capsys, *arg, foreign)
    assert code == 2 and "unknown rule, code prefix or category" in err and "hardening" in err


def test_rules_list_and_docs_show_the_category(capsys):
    assert main(["rules"]) == 0
    out = capsys.readouterr().out
    for code, rule in RULES.items():
        line = next(line for line in out.splitlines() if line.startswith(code))
        assert f" {rule.CATEGORY} " in line
    rules_md = (REPO_ROOT / "docs" / "rules.md").read_text()
    assert "| GRPO809" in rules_md or "[GRPO809]" in rules_md
