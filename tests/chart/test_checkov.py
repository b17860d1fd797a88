"""Security gate: checkov's Kubernetes checks on every object of every shipped values file, in one run.

A finding passes only when the chart skips it in the object itself with `checkov.io/skip<N>: <ID>=<reason>`.
checkov exits 0 on a missing directory and on "no runners", so an empty or unparsed scan is a failure too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

SANDBOX_PRIVILEGED = "qwen3-235b+sandbox-privileged"
# A node group for the sandbox alone: what sandbox-fusion.privileged: true requires.
DEDICATED = {"nodeSelector": {"grpo-stack/sandbox": "true"},
             "tolerations": [{"key": "grpo-stack/sandbox", "operator": "Exists", "effect": "NoSchedule"}]}
PRIVILEGED = {"sandbox-fusion.privileged": True, "sandbox-fusion.dedicatedNodes": DEDICATED}
EVAL_RELEASE = "qwen3-235b+eval"  # values/eval/eval.yaml on top, serving a merged checkpoint (provenance gate)
EVAL_OVERRIDES = {"global.components.raycluster": False, "global.components.sandboxFusion": False,
                  "global.components.fsxUtils": False, "global.components.vllm": True,
                  "global.components.lmEval": True, "global.eval.checkpointStep": 100}


@pytest.fixture(scope="module")
def scan_dir(tmp_path_factory, rendered_all, render_values) -> Path:
    """One file per object: <values>/<kind>-<name>.yaml, plus the opt-in privileged sandbox variant."""
    root = tmp_path_factory.mktemp("checkov")
    renders = {**rendered_all, SANDBOX_PRIVILEGED: render_values("qwen3-235b", PRIVILEGED),
               EVAL_RELEASE: render_values("qwen3-235b", EVAL_OVERRIDES)}
    for name, rendered in renders.items():
        out = root / name
        out.mkdir()
        for o in rendered.objects:
            (out / f"{o.kind.lower()}-{o.name}.yaml").write_text(yaml.safe_dump(o.obj, sort_keys=False))
    return root


@pytest.fixture(scope="module")
def checkov_report(scan_dir) -> dict:
    checkov = Path(sys.executable).with_name("checkov")
    env = {**os.environ, "CKV_SKIP_PACKAGE_UPDATE_CHECK": "true", "BC_SKIP_MAPPING": "TRUE"}
    proc = subprocess.run([str(checkov), "-d", str(scan_dir), "--framework", "kubernetes", "--skip-download",
                           "-o", "json", "--quiet"], check=False, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode in (0, 1), f"checkov rc {proc.returncode}: {proc.stderr[-2000:]}"
    assert "no runners" not in (proc.stdout + proc.stderr).lower(), proc.stderr[-2000:]
    assert "does not exist" not in proc.stderr, proc.stderr[-2000:]
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"checkov printed no JSON report (rc {proc.returncode}): {proc.stdout[:500]} {proc.stderr[-1000:]}")
    reports = report if isinstance(report, list) else [report]
    k8s = [r for r in reports if r.get("check_type") == "kubernetes"]
    assert len(k8s) == 1, f"no kubernetes results in checkov's report: {str(report)[:500]}"
    return k8s[0]


def _findings(report: dict, subdir: str | None = None) -> list[str]:
    results = report["results"]
    bad = list(results.get("failed_checks") or [])
    # A skip without a reason is not a justification.
    bad += [c for c in results.get("skipped_checks") or []
            if not (c.get("check_result") or {}).get("suppress_comment", "").strip()
            or (c.get("check_result") or {}).get("suppress_comment") == "No comment provided"]
    by_finding: dict[tuple[str, str, str], list[str]] = {}
    for c in bad:
        values_dir, _, object_file = c.get("file_path", "").lstrip("/").partition("/")
        if (subdir is None and values_dir == SANDBOX_PRIVILEGED) or (subdir is not None and values_dir != subdir):
            continue
        key = (c["check_id"], object_file.removesuffix(".yaml"), c.get("check_name", ""))
        by_finding.setdefault(key, []).append(values_dir)
    return [f"{check}  {obj}  {name}  [{', '.join(sorted(set(v)))}]"
            for (check, obj, name), v in sorted(by_finding.items())]


def test_checkov_scanned_every_object(checkov_report, rendered_all):
    """A scan that parsed nothing passes everything: the count must cover the rendered objects."""
    summary = checkov_report["summary"]
    rendered = sum(len(r.objects) for r in rendered_all.values())
    assert summary.get("parsing_errors", 0) == 0, summary
    assert summary["passed"] + summary["failed"] + summary.get("skipped", 0) > 0, summary
    assert summary.get("resource_count", 0) >= rendered, (summary, rendered)


def test_checkov_no_unjustified_findings(checkov_report):
    """Every checkov finding on a shipped configuration is fixed in the chart or skipped there with a reason."""
    findings = _findings(checkov_report)
    assert not findings, f"{len(findings)} checkov findings:\n" + "\n".join(findings)


def test_checkov_privileged_sandbox_is_justified(checkov_report):
    """sandbox-fusion.privileged: true is opt-in; the chart must then carry a reasoned CKV_K8S_16 skip that
    checkov honours (a skip on the pod template is not read by checkov)."""
    privileged = [f for f in _findings(checkov_report, SANDBOX_PRIVILEGED) if f.startswith("CKV_K8S_16 ")]
    assert not privileged, "\n".join(privileged)
