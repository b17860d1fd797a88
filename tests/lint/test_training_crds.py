"""The Kubeflow training operators' jobs checked against the CRDs the operators release (grpo_stack/trainingcrds,
copied with provenance): each shipped file is the CRD its SOURCES entry names, and GRPO002 refuses what that CRD's
schema refuses for the object's apiVersion. tests/cluster/test_training_crds_admission.py asks the real API server
the same questions."""

from __future__ import annotations

import json

import pytest
import yaml
from grpo_stack.cli.lint import main
from grpo_stack.trainingcrds import definition, file_serving, sources

MPIJOB = """apiVersion: kubeflow.org/{version}
kind: MPIJob
metadata: {{name: bert-efa, namespace: team}}
spec:
  slotsPerWorker: 1
{extra}
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
            - {{name: launcher, image: "mpioperator/mpi-pi:0.7.0", command: [mpirun, -np, "2", /opt/pi]}}
    Worker:
      replicas: 2
      template:
        spec:
          containers:
            - {{name: worker, image: "mpioperator/mpi-pi:0.7.0"}}
"""


def lint(capsys, path) -> tuple[list[dict], str]:
    main(["--no-cache", "--format", "json", "--select", "GRPO002", str(path)])
    out = capsys.readouterr()
    return json.loads(out.out)["findings"], out.err


@pytest.mark.parametrize("file", sorted(sources()))
def test_each_shipped_crd_is_the_one_its_source_entry_names(file):
    meta, crd = sources()[file], definition(file)
    assert crd["kind"] == "CustomResourceDefinition"
    assert (crd["spec"]["names"]["kind"], crd["spec"]["group"]) == (meta["kind"], meta["group"])
    assert [v["name"] for v in crd["spec"]["versions"] if v.get("served")] == meta["served"]
    assert crd["metadata"]["name"] == f"{crd['spec']['names']['plural']}.{meta['group']}"
    assert len(meta["sha256"]) == 64 and meta["tag"] and meta["path"].endswith(".yaml")


def test_the_two_operators_mpijob_versions_come_from_their_own_crds():
    """The Training Operator serves MPIJob v1 and the MPI Operator v2beta1, under one CRD name."""
    assert sources()[file_serving("MPIJob", "kubeflow.org/v1")]["upstream"] == "kubeflow/training-operator"
    assert sources()[file_serving("MPIJob", "kubeflow.org/v2beta1")]["upstream"] == "kubeflow/mpi-operator"
    assert file_serving("MPIJob", "kubeflow.org/v1alpha2") is None


def test_a_field_of_one_version_written_in_another_is_refused(capsys, tmp_path):
    """`spec.cleanPodPolicy` is MPIJob v1's; v2beta1 moved it under `runPolicy`, and the API server's strict field
    validation (kubectl's default) refuses it there: an error at `spec`, where v1 and v2beta1's runPolicy pass."""
    cases = {"v2beta1-top": ("v2beta1", "  cleanPodPolicy: Running"),
             "v2beta1-run-policy": ("v2beta1", "  runPolicy: {cleanPodPolicy: Running}"),
             "v1-top": ("v1", "  cleanPodPolicy: Running")}
    found = {}
    for name, (version, extra) in cases.items():
        path = tmp_path / f"{name}.yaml"
        path.write_text(MPIJOB.format(version=version, extra=extra))
        found[name], _ = lint(capsys, path)
    assert [(f["key_path"], "cleanPodPolicy" in f["message"], f["severity"]) for f in found["v2beta1-top"]] == [
        ("spec", True, "error")]
    assert found["v2beta1-run-policy"] == found["v1-top"] == []


def test_a_version_no_shipped_operator_serves_is_noted_not_refused(capsys, tmp_path):
    """MPI Operator releases before v0.3.0 served v1alpha2: an old operator may still, so the object is left
    unchecked and named once, not called wrong."""
    path = tmp_path / "old.yaml"
    path.write_text(MPIJOB.format(version="v1alpha2", extra="  cleanPodPolicy: Running"))
    findings, err = lint(capsys, path)
    assert findings == []
    assert "not schema-checked: 1 object(s) of kind MPIJob (kubeflow.org/v1alpha2)" in err


def test_a_pytorchjob_replica_count_of_the_wrong_type_is_refused(capsys, tmp_path):
    job = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "ddp", "namespace": "team"},
           "spec": {"pytorchReplicaSpecs": {"Worker": {"replicas": "2", "template": {"spec": {"containers": [
               {"name": "pytorch", "image": "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"}]}}}}}}
    path = tmp_path / "ddp.yaml"
    path.write_text(yaml.safe_dump(job))
    findings, _ = lint(capsys, path)
    assert [f["key_path"] for f in findings] == ["spec.pytorchReplicaSpecs.Worker.replicas"]


def test_a_field_set_to_null_is_no_field(capsys, tmp_path):
    """`env:` with no items is null, which the API server prunes from a custom resource before it validates: no
    error, and the rules still read the job (its GPU container's missing memory is reported)."""
    job = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {"name": "bw", "namespace": "team"},
           "spec": {"mpiReplicaSpecs": {"Worker": {"replicas": 2, "template": {"spec": {"containers": [
               {"name": "w", "image": "mpioperator/mpi-pi:0.7.0", "env": None,
                "resources": {"limits": {"nvidia.com/gpu": 2}}}]}}}}}}
    path = tmp_path / "bw.yaml"
    path.write_text(yaml.safe_dump(job))
    main(["--no-cache", "--format", "json", "--select", "GRPO002,GRPO846", str(path)])
    codes = [f["code"] for f in json.loads(capsys.readouterr().out)["findings"]]
    assert codes == ["GRPO846"]


def test_a_fractional_cpu_written_as_a_number_is_refused_and_the_job_still_linted(capsys, tmp_path):
    """`cpu: 0.5` is a YAML number; a CRD's quantities are integers or strings, and the API server refuses the
    job (tests/cluster/test_training_crds_admission.py). The error says how to write it, and the rules still read
    the job: a wrong scalar is not a wrong shape."""
    job = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {"name": "pi", "namespace": "team"},
           "spec": {"mpiReplicaSpecs": {"Worker": {"replicas": 2, "template": {"spec": {"containers": [
               {"name": "w", "image": "mpioperator/mpi-pi:openmpi", "resources": {"limits": {"cpu": 0.5}}}]}}}}}}
    path = tmp_path / "pi.yaml"
    path.write_text(yaml.safe_dump(job))
    main(["--no-cache", "--format", "json", "--select", "GRPO002,GRPO701", str(path)])
    found = {(f["code"], f["key_path"]): f["message"] for f in json.loads(capsys.readouterr().out)["findings"]}
    cpu = "spec.mpiReplicaSpecs.Worker.template.spec.containers.0.resources.limits.cpu"
    assert 'quote it: "0.5"' in found[("GRPO002", cpu)]
    assert ("GRPO701", "spec.mpiReplicaSpecs.Worker.template.spec.containers.0.image") in found

