"""GRPO818's severity follows what the files show. A claim mounted whole and writable is judged only where its name
or several pods say it is shared: on other projects' manifests a warning naming the assumption, that the volume holds
more than the workload writes where the files declare it, that it is shared at all where they do not (it may be the
pod's own disk, a notebook's home); with nothing saying so it is not reported. The chart's own FSx volume, which
every run shares, is an error (tests/lint/rules fixtures, values mode)."""

from __future__ import annotations

import textwrap

from grpo_stack.lint.release import lint_manifests

POD = """\
apiVersion: v1
kind: Pod
metadata: {name: tool}
spec:
  containers:
    - {name: c, image: "registry.example.com/tool:1.2.3", volumeMounts: [{name: data, mountPath: /data}]}
  volumes:
    - {name: data, persistentVolumeClaim: {claimName: team-data}}
"""
CLAIM = """\
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: team-data}
spec: {accessModes: [ReadWriteMany], resources: {requests: {storage: 1Ti}}}
"""


def _findings(tmp_path, text: str):
    path = tmp_path / "tool.yaml"
    path.write_text(textwrap.dedent(text))
    return [(f.severity.value, f.message) for f in lint_manifests(str(path)).findings if f.code == "GRPO818"]


def test_a_declared_shared_claim_mounted_whole_and_writable_is_a_warning_naming_the_assumption(tmp_path):
    ((severity, message),) = _findings(tmp_path, (POD + CLAIM).replace("team-data", "team-fsx"))
    assert severity == "warning" and "holds more than this workload writes" in message


def test_a_declared_claim_only_one_pod_mounts_is_its_own_volume(tmp_path):
    """A ReadWriteMany claim declared beside the one pod that mounts it, named for nothing shared, is that pod's
    volume (a benchmark's results): not reported."""
    assert _findings(tmp_path, POD + CLAIM) == []


def test_a_claim_the_files_do_not_declare_is_a_warning_naming_the_assumption(tmp_path):
    ((severity, message),) = _findings(tmp_path, POD.replace("team-data", "team-efs-data"))
    assert severity == "warning" and "assumed shared" in message


def test_an_undeclared_claim_of_several_pods_is_judged_and_one_pods_is_not(tmp_path):
    assert _findings(tmp_path, POD) == []  # one pod, a claim named for nothing shared: its own disk
    deployment = textwrap.dedent("""\
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: tool}
        spec:
          replicas: 3
          selector: {matchLabels: {app: tool}}
          template:
            metadata: {labels: {app: tool}}
            spec:
              containers:
                - {name: c, image: "registry.example.com/tool:1.2.3", volumeMounts: [{name: data, mountPath: /data}]}
              volumes:
                - {name: data, persistentVolumeClaim: {claimName: team-data}}
        """)
    ((severity, _),) = _findings(tmp_path, deployment)
    assert severity == "warning"
