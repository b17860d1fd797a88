"""The training operators' CRDs shipped in grpo_stack/trainingcrds, served by the real API server: the MPI
Operator's MPIJob (v2beta1) and the Training Operator's PyTorchJob and TFJob. Each case is sent as `kubectl create
--dry-run=server --validate=strict` (kubectl's default field validation), and grpo-lint's GRPO002 errors on it,
linted alone, must say refused exactly where the API server refuses.

Where the check stops: the Training Operator's MPIJob v1 shares the CRD name mpijobs.kubeflow.org with the MPI
Operator's, so a cluster serves one of them; this one serves v2beta1, and v1 is checked against its CRD file only
(tests/lint/test_training_crds.py). No operator runs: what the operators refuse after admission (their webhooks'
and controllers' own checks) is not asked.
"""

from __future__ import annotations

import copy
import json

import pytest
import yaml
from grpo_stack.lint.release import lint_manifests
from grpo_stack.trainingcrds import definition, file_serving

from tests.cluster.admission_mutations import DELETE, set_at
from tests.cluster.kube_api import scratch_namespace

NS = "training-crds"
CONTAINER = {"name": "pytorch", "image": "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime",
             "command": ["torchrun", "--nproc-per-node=1", "/workspace/train.py"]}
TEMPLATE = {"spec": {"containers": [CONTAINER]}}
MPIJOB = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {"name": "bert"},
          "spec": {"slotsPerWorker": 1, "runPolicy": {"cleanPodPolicy": "Running"}, "mpiReplicaSpecs": {
              "Launcher": {"replicas": 1, "template": {"spec": {"containers": [
                  {"name": "launcher", "image": "mpioperator/mpi-pi:0.7.0", "command": ["mpirun", "-np", "2"]}]}}},
              "Worker": {"replicas": 2, "template": TEMPLATE}}}}
PYTORCHJOB = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "ddp"},
              "spec": {"pytorchReplicaSpecs": {"Master": {"replicas": 1, "template": TEMPLATE},
                                               "Worker": {"replicas": 1, "template": TEMPLATE}}}}
TFJOB = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": "tf"},
         "spec": {"tfReplicaSpecs": {"Worker": {"replicas": 2, "restartPolicy": "OnFailure", "template": {
             "spec": {"containers": [{"name": "tensorflow", "image": "tensorflow/tensorflow:2.18.0"}]}}}}}}


def _with(obj: dict, path: str, value) -> dict:
    out = copy.deepcopy(obj)
    set_at(out, path, value)
    return out


def _without(obj: dict, path: str) -> dict:
    return _with(obj, path, DELETE)


CASES = {
    "mpijob": MPIJOB,
    "mpijob-v1-field-in-v2beta1": _with(MPIJOB, "spec.cleanPodPolicy", "Running"),
    "mpijob-slots-as-text": _with(MPIJOB, "spec.slotsPerWorker", "8"),
    "mpijob-unknown-implementation": _with(MPIJOB, "spec.mpiImplementation", "MVAPICH"),
    "pytorchjob": PYTORCHJOB,
    "pytorchjob-nproc": _with(PYTORCHJOB, "spec.nprocPerNode", "auto"),
    "pytorchjob-replicas-as-text": _with(PYTORCHJOB, "spec.pytorchReplicaSpecs.Worker.replicas", "2"),
    "pytorchjob-misplaced-restart-policy": _with(PYTORCHJOB, "spec.restartPolicy", "OnFailure"),
    "pytorchjob-no-template": _without(PYTORCHJOB, "spec.pytorchReplicaSpecs.Worker.template"),
    # `env:` with no items: null, which the API server prunes from a custom resource before it validates
    "pytorchjob-null-env": _with(PYTORCHJOB, "spec.pytorchReplicaSpecs.Worker.template",
                                 {"spec": {"containers": [{**CONTAINER, "env": None}]}}),
    "mpijob-null-run-policy": _with(MPIJOB, "spec.runPolicy", None),
    "pytorchjob-null-gpu-limit": _with(PYTORCHJOB, "spec.pytorchReplicaSpecs.Worker.template", {"spec": {"containers": [
        {**CONTAINER, "resources": {"limits": {"nvidia.com/gpu": None}, "requests": {"cpu": "1"}}}]}}),
    "mpijob-fractional-cpu-as-number": _with(MPIJOB, "spec.mpiReplicaSpecs.Worker.template", {"spec": {"containers": [
        {**CONTAINER, "resources": {"limits": {"cpu": 0.5}}}]}}),
    "mpijob-labels-beside-the-pod-spec": _with(MPIJOB, "spec.mpiReplicaSpecs.Worker.template",
                                               {"labels": {"app": "pi"}, **TEMPLATE}),
    "tfjob": TFJOB,
    "tfjob-unknown-restart-policy": _with(TFJOB, "spec.tfReplicaSpecs.Worker.restartPolicy", "Sometimes"),
}


@pytest.fixture(scope="module")
def served(control_plane):
    crds = [definition(file_serving(o["kind"], o["apiVersion"])) for o in (MPIJOB, PYTORCHJOB, TFJOB)]
    control_plane.apply(crds)
    control_plane.wait_established(*[c["metadata"]["name"] for c in crds])
    with scratch_namespace(control_plane, NS):
        yield control_plane


def _refused(cp, obj: dict) -> str | None:
    proc = cp.kubectl("create", "--dry-run=server", "--validate=strict", "-n", NS, "-f", "-",
                      input=json.dumps(obj), check=False)
    return proc.stderr.strip() if proc.returncode else None


def _lint_errors(obj: dict, tmp_path) -> list[str]:
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump({**obj, "metadata": {**obj["metadata"], "namespace": NS}}, sort_keys=False))
    result = lint_manifests(str(path))
    return [f.message for f in result.findings if f.code == "GRPO002" and f.severity.value == "error"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_grpo_lint_refuses_what_the_api_server_refuses(served, case, tmp_path):
    refusal = _refused(served, CASES[case])
    errors = _lint_errors(CASES[case], tmp_path)
    assert bool(errors) == bool(refusal), (refusal, errors)
