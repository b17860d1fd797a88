"""Each file is read as its consumer reads it. Values files go to Helm (go-yaml v3): a scalar Helm reads otherwise
than YAML 1.1 (a leading-zero number, `yes`) is refused with its line. Manifest streams go to kubectl and the API
server (sigs.k8s.io/yaml, YAML 1.1, as PyYAML): `defaultMode: 0777` is the octal 511 every Kubernetes example
means, and `value: yes` is the boolean the API server then refuses for a string field. Where the check stops:
go-yaml itself does not run here; its readings are the ones sigs.k8s.io/yaml documents."""

from __future__ import annotations

import json

from grpo_stack.cli.lint import main

POD = """apiVersion: v1
kind: Pod
metadata: {name: p, namespace: grpo}
spec:
  automountServiceAccountToken: false
  containers:
    - name: c
      image: busybox@sha256:DIGEST
      env: [{name: FLAG, value: {value}}]
      volumeMounts: [{name: cfg, mountPath: /cfg}]
  volumes:
    - name: cfg
      configMap: {name: cfg, defaultMode: 0777}
""".replace("DIGEST", "0" * 64)


def _lint(capsys, path) -> tuple[int, dict]:
    code = main(["--no-cache", "--format", "json", "--select", "GRPO002", str(path)])
    return code, json.loads(capsys.readouterr().out)


def test_octal_mode_in_a_manifest_is_read_as_kubectl_reads_it(capsys, tmp_path):
    path = tmp_path / "pod.yaml"
    path.write_text(POD.replace("{value}", '"on"'))
    code, out = _lint(capsys, path)
    assert code == 0 and not out["input_errors"], out


def test_a_yaml_1_1_boolean_for_a_string_field_is_the_api_servers_refusal(capsys, tmp_path):
    path = tmp_path / "pod.yaml"
    path.write_text(POD.replace("{value}", "yes"))
    code, out = _lint(capsys, path)
    assert code == 1 and not out["input_errors"], out
    assert any(f["key_path"].endswith("env.0.value") for f in out["findings"]), out["findings"]


def test_a_leading_zero_in_a_values_file_is_still_refused(capsys, tmp_path):
    path = tmp_path / "values.yaml"
    path.write_text("global:\n  cluster:\n    nodes: 010\n")
    code = main(["--no-cache", str(path)])
    out = capsys.readouterr()
    said = out.out + out.err
    assert code == 2 and "leading zero" in said and "values.yaml:3:" in said, said
