"""A core PodTemplate object runs no pod: no Kubernetes controller instantiates it (a ProvisioningRequest names one
only to size the capacity it asks for), so no rule judges its containers as if they ran, while the same pod spec in a
Job is judged. Where the check stops: the ProvisioningRequest's capacity and the cluster autoscaler that reads it are
not run here."""

from __future__ import annotations

from grpo_stack.lint.release import lint_manifests

SPEC = """      containers:
        - name: sizer
          image: perl
          command: [perl, -e, "print 1"]
          resources: {limits: {nvidia.com/gpu: 8}}
"""
POD_TEMPLATE = f"""apiVersion: v1
kind: PodTemplate
metadata: {{name: gpu-shape}}
template:
  spec:
{SPEC}---
apiVersion: autoscaling.x-k8s.io/v1
kind: ProvisioningRequest
metadata: {{name: gpu-capacity}}
spec:
  provisioningClassName: queued-provisioning.gke.io
  podSets: [{{count: 4, podTemplateRef: {{name: gpu-shape}}}}]
"""
JOB = f"""apiVersion: batch/v1
kind: Job
metadata: {{name: gpu-shape}}
spec:
  template:
    spec:
      restartPolicy: Never
{SPEC}"""


def _codes(tmp_path, text: str) -> set[str]:
    path = tmp_path / "m.yaml"
    path.write_text(text)
    return {f.code for f in lint_manifests(str(path)).findings}


def test_a_pod_template_object_is_not_judged_as_a_running_pod(tmp_path):
    assert {"GRPO701", "GRPO846", "GRPO617"} <= _codes(tmp_path, JOB)
    assert not {"GRPO701", "GRPO846", "GRPO617", "GRPO809"} & _codes(tmp_path, POD_TEMPLATE)
