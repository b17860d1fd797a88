"""GRPO624 by confidence: pods that run at once on a ReadWriteOnce claim are an error; pods that can take it in turn
(a Job running one pod at a time beside at most one long-running pod: a training Job whose model a server reads
after it) are a warning naming the assumption that they run at once. Where the check stops: the verdict reads the
manifests; the order in which a user applies them is not known."""

from __future__ import annotations

from tests.lint.fixtures import severities

CLAIM = """apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: artifacts}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 2Gi}}}
"""
JOB = """---
apiVersion: batch/v1
kind: Job
metadata: {{name: fit}}
spec:
  parallelism: {parallelism}
  template:
    spec:
      restartPolicy: Never
      containers: [{{name: fit, image: "registry.example/fit:3.1.0", command: [python, fit.py]}}]
      volumes: [{{name: a, persistentVolumeClaim: {{claimName: artifacts}}}}]
"""
SERVER = """---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}}}
spec:
  replicas: {replicas}
  strategy: {{type: Recreate}}
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      containers: [{{name: s, image: "registry.example/serve:3.1.0", command: [python, serve.py]}}]
      volumes: [{{name: a, persistentVolumeClaim: {{claimName: artifacts}}}}]
"""


def test_a_job_then_one_server_is_a_warning(tmp_path):
    text = CLAIM + JOB.format(parallelism=1) + SERVER.format(name="predict", replicas=1)
    assert set(severities(tmp_path, text, "GRPO624")) == {"warning"}


def test_parallel_pods_of_a_job_are_an_error(tmp_path):
    text = CLAIM + JOB.format(parallelism=2) + SERVER.format(name="predict", replicas=1)
    assert set(severities(tmp_path, text, "GRPO624")) == {"error"}


def test_two_servers_are_an_error(tmp_path):
    text = CLAIM + SERVER.format(name="predict", replicas=1) + SERVER.format(name="explain", replicas=1)
    assert set(severities(tmp_path, text, "GRPO624")) == {"error"}


def test_a_job_beside_a_two_replica_server_is_an_error(tmp_path):
    text = CLAIM + JOB.format(parallelism=1) + SERVER.format(name="predict", replicas=2)
    assert set(severities(tmp_path, text, "GRPO624")) == {"error"}
