"""Instance types as a user writes them: a typo is an error that names the catalogued type; a real type the
catalogue lacks passes once `.grpo-lint.yaml` states its capacity (and is then fit-checked); another cloud's
machine name, or an EC2 family the catalogue lacks, in a plain manifest is no finding. Checked through
grpo-lint's own CLI on the shipped chart."""

from __future__ import annotations

import json

from grpo_stack.cli.lint import main
from grpo_stack.paths import REPO_ROOT

BASE = str(REPO_ROOT / "values" / "qwen3-235b.yaml")
POD = """apiVersion: v1
kind: Pod
metadata: {{name: app, namespace: team}}
spec:
  nodeSelector: {{node.kubernetes.io/instance-type: {type}}}
  containers:
    - name: app
      image: registry.example/app@sha256:{digest}
      resources: {{requests: {{cpu: "8", memory: 8Gi}}}}
"""


def lint(capsys, tmp_path, *argv, config=None):
    if config is not None:
        (tmp_path / "cfg.yaml").write_text(config)
        argv = ("--config", str(tmp_path / "cfg.yaml"), *argv)
    code = main(["--no-cache", "--format", "json", "--select", "GRPO601,GRPO613", *argv])
    out = capsys.readouterr()
    return code, json.loads(out.out) if out.out.strip() else {}, out.err


def messages(report) -> list[str]:
    return [f["message"] for f in report.get("findings", report if isinstance(report, list) else [])]


def test_gpu_type_typo_is_an_error_naming_the_type(capsys, tmp_path):
    values = tmp_path / "typo.yaml"
    values.write_text("global:\n  cluster:\n    gpuInstanceType: p6-b200.48xlarg\n")
    code, report, err = lint(capsys, tmp_path, "--base", BASE, str(values))
    assert code == 1, (report, err)
    assert any("did you mean p6-b200.48xlarge?" in m for m in messages(report)), report


def test_real_type_with_stated_capacity_is_fit_checked(capsys, tmp_path):
    """In a plain manifest a family the catalogue lacks is no finding (the catalogue's gap, not the file's); an
    unknown size of a family it lists is a warning naming the sizes it has."""
    pod = tmp_path / "pod.yaml"
    pod.write_text(POD.format(type="c7i.xlarge", digest="0" * 64))
    code, report, _ = lint(capsys, tmp_path, str(pod))
    assert code == 0 and not messages(report), report
    pod.write_text(POD.format(type="c6i.3xlarge", digest="0" * 64))
    code, report, _ = lint(capsys, tmp_path, str(pod))
    assert any("did you mean" in m and "c6i." in m for m in messages(report)), report
    pod.write_text(POD.format(type="c7i.xlarge", digest="0" * 64))
    # c7i.xlarge: 4 vCPU; the pod asks for 8 CPU. Stated, the type is known and the misfit is an error.
    config = "instance-types:\n  c7i.xlarge: {cpu: 3920m, memory: 6584Mi, gpus: 0, efa: 0}\n"
    code, report, _ = lint(capsys, tmp_path, str(pod), config=config)
    assert code == 1 and any("requests 8 CPU; c7i.xlarge has 3.92 allocatable" in m for m in messages(report))
    small = POD.format(type="c7i.xlarge", digest="0" * 64).replace('cpu: "8", memory: 8Gi', 'cpu: "2", memory: 4Gi')
    pod.write_text(small)
    code, report, _ = lint(capsys, tmp_path, str(pod), config=config)
    assert code == 0 and not messages(report), report


def test_malformed_capacity_is_an_input_error(capsys, tmp_path):
    pod = tmp_path / "pod.yaml"
    pod.write_text(POD.format(type="c7i.xlarge", digest="0" * 64))
    code, _, _ = lint(capsys, tmp_path, str(pod), config="instance-types:\n  c7i.xlarge: {cpu: 4}\n")
    assert code == 2


def test_other_clouds_machine_names_are_no_finding(capsys, tmp_path):
    pod = tmp_path / "pod.yaml"
    for machine in ("a2-highgpu-8g", "n1-standard-8", "Standard_ND96asr_v4"):
        pod.write_text(POD.format(type=machine, digest="0" * 64))
        code, report, _ = lint(capsys, tmp_path, str(pod))
        assert code == 0 and not messages(report), (machine, report)


def test_a_partial_node_names_where_its_figures_come_from_in_words(capsys, tmp_path):
    """Half a node's EFA interfaces: the message says the catalogue's figures are EC2 and Karpenter data, not the
    catalogue's internal reference line numbers (K:… · V:… · E:…)."""
    values = tmp_path / "half.yaml"
    values.write_text("global:\n  cluster:\n    gpuInstanceType: p5en.48xlarge\n    efaPerNode: 8\n")
    _, report, _ = lint(capsys, tmp_path, "--base", BASE, str(values))
    (text,) = [m for m in messages(report) if "efaPerNode 8" in m]
    assert "p5en.48xlarge has 16 EFA interfaces per node" in text and "EC2 and Karpenter instance data" in text
    assert "K:" not in text and " · " not in text
