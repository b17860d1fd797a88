"""GRPO401 on a legacy Ray label (`ray-node-type`): an error where the set's pods show that none carries it, a
warning naming the assumption where the set has no pod (the Service file applied apart from its RayCluster, whose
head template may set the label itself)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from tests.lint.fixtures import severities

SERVICE = textwrap.dedent("""\
    apiVersion: v1
    kind: Service
    metadata: {name: api}
    spec:
      selector: {ray-node-type: head}
      ports: [{port: 8000}]
    """)
CLUSTER = textwrap.dedent("""\
    ---
    apiVersion: ray.io/v1
    kind: RayCluster
    metadata: {name: batch}
    spec:
      headGroupSpec:
        rayStartParams: {}
        template:
          spec:
            containers: [{name: ray-head, image: rayproject/ray:2.46.0-py310}]
      workerGroupSpecs: []
    """)


def _severities(tmp_path, text: str) -> list[str]:
    return severities(tmp_path, text, "GRPO401")


def test_a_service_alone_is_a_warning(tmp_path):
    assert _severities(tmp_path, SERVICE) == ["warning"]


def test_beside_a_cluster_whose_pods_lack_it_it_is_an_error(tmp_path):
    assert _severities(tmp_path, SERVICE + CLUSTER) == ["error"]


AFFINITY = textwrap.dedent("""\
    apiVersion: batch/v1
    kind: Job
    metadata: {name: bench}
    spec:
      template:
        spec:
          restartPolicy: Never
          affinity:
            podAffinity:
              requiredDuringSchedulingIgnoredDuringExecution:
                - labelSelector: {matchLabels: {app.kubernetes.io/name: raw-vllm}}
                  topologyKey: kubernetes.io/hostname
          containers: [{name: bench, image: "vllm/vllm-openai:v0.11.0"}]
    """)


def test_an_affinity_term_for_pods_of_another_file_is_a_warning(tmp_path):
    """A benchmark placed beside the server it measures names pods applied from the server's own file."""
    assert _severities(tmp_path, AFFINITY) == ["warning"]


TWO_CLUSTERS = textwrap.dedent("""\
    apiVersion: v1
    kind: Service
    metadata: {name: serve}
    spec:
      selector: {ray.io/node-type: head}
      ports: [{port: 8000}]
    """) + "".join(CLUSTER.replace("name: batch", f"name: {name}") for name in ("zeta", "alpha", "mid"))


def test_the_fix_names_the_clusters_the_same_way_in_every_process(tmp_path):
    """Set order follows the string hash seed, which differs per process: the fix must not depend on it."""
    path = tmp_path / "manifests.yaml"
    path.write_text(TWO_CLUSTERS)
    probe = ("import sys; from grpo_stack.lint.release import lint_manifests; "
             "print([f.remediation for f in lint_manifests(sys.argv[1]).findings if f.code == 'GRPO401'])")
    seen = {subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": str(seed)}).stdout for seed in (1, 2, 3, 4)}
    assert seen == {"['add ray.io/cluster: <one of alpha, mid, zeta>']\n"}
