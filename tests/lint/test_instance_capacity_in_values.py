"""A real instance type the catalogue lacks, stated in the values file (`global.instanceTypes`): without the
capacity it is an error with "did you mean"; with it the type passes and GRPO601 compares the pod's requests with
the stated figures; a malformed entry is an input error (file, key path, line, exit 2). Checked through
grpo-lint's own CLI on the shipped chart and a shipped values file, and through the real Helm (the chart ignores
the key; its generated schema refuses a malformed entry). The stated figures themselves are the user's: no check
here reaches a real node.

c7i.4xlarge (16 vCPU, 32 GiB) is a real EC2 type the catalogue does not list; the figures below are of the
shape `kubectl describe node` reports (allocatable after the kubelet's reservations). The Ray head requests the
chart's default 8 CPU and 32Gi."""

from __future__ import annotations

import json
import subprocess

import pytest
from grpo_stack.catalog.instances import lookup
from grpo_stack.cli.lint import main
from grpo_stack.paths import CHART_DIR, REPO_ROOT

BASE = str(REPO_ROOT / "values" / "qwen3-235b.yaml")
TYPE = "c7i.4xlarge"
HEAD = f"raycluster:\n  head:\n    instanceType: {TYPE}\n"
# 27.7 GiB allocatable: below the head's 32Gi request.
STATED = f"global:\n  instanceTypes:\n    {TYPE}: {{cpu: 15890m, memory: 28379Mi, gpus: 0, efa: 0}}\n"


def lint(capsys, tmp_path, values: str, *argv: str, config: str | None = None, fmt: str = "json"):
    path = tmp_path / "overlay.yaml"
    path.write_text(values)
    if config is not None:
        (tmp_path / "cfg.yaml").write_text(config)
        argv = ("--config", str(tmp_path / "cfg.yaml"), *argv)
    code = main(["--no-cache", "--format", fmt, "--select", "GRPO601,GRPO613", *argv, "--base", BASE, str(path)])
    out = capsys.readouterr()
    if fmt != "json":
        return code, out.out + out.err, path
    report = json.loads(out.out) if out.out.strip() else {}
    return code, [f for f in report.get("findings", [])], path


def test_the_type_is_uncatalogued():
    assert lookup(TYPE) is None, f"{TYPE} is catalogued now: pick another real type the catalogue lacks"


def test_unstated_type_is_an_error_with_did_you_mean(capsys, tmp_path):
    code, findings, _ = lint(capsys, tmp_path, HEAD)
    assert code == 1, findings
    hit = next(f for f in findings if f["code"] == "GRPO601")
    assert hit["key_path"] == "raycluster.head.instanceType", hit
    assert "did you mean" in hit["message"] and "global.instanceTypes" in hit["message"], hit


def test_stated_capacity_is_what_requests_are_compared_with(capsys, tmp_path):
    code, findings, _ = lint(capsys, tmp_path, HEAD + STATED)
    assert code == 1, findings
    messages = [f["message"] for f in findings]
    assert not any("did you mean" in m for m in messages), messages
    assert any(f"requests 32.0 GiB; {TYPE} has 27.7 GiB allocatable" in m for m in messages), messages
    # The head asks for less than the stated figures: the type is known and the pod fits.
    fits = HEAD + "    resources: {cpu: \"8\", memory: 24Gi}\n" + STATED
    code, findings, _ = lint(capsys, tmp_path, fits)
    assert code == 0 and not findings, findings


def test_values_entry_wins_over_lint_config(capsys, tmp_path):
    """`.grpo-lint.yaml` says the node is large; the values file, describing this release's cluster, says not."""
    config = f"instance-types:\n  {TYPE}: {{cpu: 63770m, memory: 234021Mi, gpus: 0, efa: 0}}\n"
    code, findings, _ = lint(capsys, tmp_path, HEAD, config=config)
    assert code == 0 and not findings, findings
    code, findings, _ = lint(capsys, tmp_path, HEAD + STATED, config=config)
    assert code == 1 and any("27.7 GiB allocatable" in f["message"] for f in findings), findings


def test_catalogued_type_stated_in_values_is_flagged(capsys, tmp_path):
    stated = "global:\n  instanceTypes:\n    m6i.4xlarge: {cpu: 99000m, memory: 999Gi, gpus: 0, efa: 0}\n"
    code, findings, _ = lint(capsys, tmp_path, stated)
    assert code == 1, findings
    assert any(f["key_path"] == "global.instanceTypes.m6i.4xlarge" and "catalogued already" in f["message"]
               for f in findings), findings


@pytest.mark.parametrize(("entry", "field"), [
    ("{cpu: 16, memory: 28379Mi, gpus: 0, efa: 0}", "cpu"),  # a number, not a quantity string
    ("{cpu: 15890m, memory: 27GB, gpus: 0, efa: 0}", "memory"),  # not a Kubernetes quantity
    ("{cpu: 15890m, memory: 28379Mi, gpus: -1, efa: 0}", "gpus"),
    ("{cpu: 15890m, memory: 28379Mi, gpus: 0, efa: two}", "efa"),
    ("{cpu: 0, memory: 28379Mi, gpus: 0, efa: 0}", "cpu"),
])
def test_wrong_typed_entry_is_an_input_error(capsys, tmp_path, entry, field):
    values = f"global:\n  instanceTypes:\n    {TYPE}: {entry}\n"
    code, text, path = lint(capsys, tmp_path, values, fmt="text")
    assert code == 2, text
    assert "Traceback" not in text
    assert f"{path}:3" in text, text
    assert f"global.instanceTypes.{TYPE}.{field}" in text or f"global.instanceTypes.{TYPE}" in text, text


def test_missing_field_is_an_input_error(capsys, tmp_path):
    values = f"global:\n  instanceTypes:\n    {TYPE}: {{cpu: 15890m, memory: 28379Mi}}\n"
    code, text, path = lint(capsys, tmp_path, values, fmt="text")
    assert code == 2 and f"{path}:3" in text and f"global.instanceTypes.{TYPE}" in text, text


def test_real_helm_ignores_the_entry_and_refuses_a_malformed_one(helm_bin, helm_env, tmp_path):
    """The chart's consumer: `helm template` renders the same release with the entry (the chart reads nothing
    from it) and refuses a malformed entry by the generated values.schema.json."""
    def template(*overlays: str) -> subprocess.CompletedProcess:
        files = []
        for i, text in enumerate(overlays):
            (tmp_path / f"o{i}.yaml").write_text(text)
            files += ["-f", str(tmp_path / f"o{i}.yaml")]
        return subprocess.run([str(helm_bin), "template", "grpo", str(CHART_DIR), "-f", BASE, *files],
                              env=helm_env, capture_output=True, text=True, timeout=120)

    plain, stated = template(), template(STATED)
    assert plain.returncode == 0 and stated.returncode == 0, stated.stderr
    assert stated.stdout == plain.stdout
    for bad in ("{cpu: 16, memory: 28379Mi, gpus: 0, efa: 0}", "{cpu: 15890m, memory: 28379Mi}"):
        refused = template(f"global:\n  instanceTypes:\n    {TYPE}: {bad}\n")
        assert refused.returncode != 0 and "instanceTypes" in refused.stderr, refused.stderr
    refused = template("global:\n  instanceTypes:\n    C7I: {cpu: 1, memory: 1Gi, gpus: 0, efa: 0}\n")
    assert refused.returncode != 0 and "C7I" in refused.stderr, refused.stderr


def test_gpu_type_stated_in_values_is_checked_like_a_catalogued_one(capsys, tmp_path):
    """A GPU type the catalogue lacks (a future `p7.48xlarge`): unstated, GRPO613 names the closest types; stated,
    the workers fit, and GRPO613 compares gpusPerNode and efaPerNode with the stated counts."""
    cluster = "global:\n  cluster: {gpuInstanceType: p7.48xlarge, gpusPerNode: 8, efaPerNode: 16}\n"
    code, findings, _ = lint(capsys, tmp_path, cluster)
    assert code == 1 and any(f["code"] == "GRPO613" and "did you mean" in f["message"] for f in findings), findings
    stated = "  instanceTypes:\n    p7.48xlarge: {cpu: 191450m, memory: 1900Gi, gpus: 8, efa: %d}\n"
    code, findings, _ = lint(capsys, tmp_path, cluster + stated % 16)
    assert code == 0 and not findings, findings
    code, findings, _ = lint(capsys, tmp_path, cluster + stated % 32)
    assert code == 1 and any(f["key_path"] == "global.cluster.efaPerNode" and "32" in f["message"]
                             for f in findings), findings
