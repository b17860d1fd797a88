"""GRPO820 reads the annotations KubeRay writes onto the head Service it creates: a RayCluster's
`headServiceAnnotations` make its LoadBalancer internal (a warning, as any internal load balancer), where the same
cluster without them is public (an error)."""

from __future__ import annotations

import textwrap

from tests.lint.fixtures import severities

CLUSTER = textwrap.dedent("""\
    apiVersion: ray.io/v1
    kind: RayCluster
    metadata: {{name: vpc-only}}
    spec:
    {annotations}  headGroupSpec:
        serviceType: LoadBalancer
        rayStartParams: {{dashboard-host: 0.0.0.0}}
        template:
          spec:
            containers: [{{name: ray-head, image: rayproject/ray:2.49.1}}]
    """)
INTERNAL = "  headServiceAnnotations: {networking.gke.io/load-balancer-type: Internal}\n"


def test_head_service_annotations_make_the_load_balancer_internal(tmp_path):
    found = severities(tmp_path, CLUSTER.format(annotations=INTERNAL), "GRPO820")
    assert found and set(found) == {"warning"}


def test_without_them_the_load_balancer_is_public(tmp_path):
    assert "error" in severities(tmp_path, CLUSTER.format(annotations=""), "GRPO820")
