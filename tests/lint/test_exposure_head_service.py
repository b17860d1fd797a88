"""GRPO820 reads the annotations KubeRay writes onto the head Service it creates: a RayCluster's
`headServiceAnnotations` make its LoadBalancer internal (a warning, as any internal load balancer), where the same
cluster without them is public (an error). And one exposure is one finding: a Service in front of a server the rule
names is not reported again as fronting one it cannot name."""

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


LAUNCHER = textwrap.dedent("""\
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: embed}
    spec:
      selector: {matchLabels: {app: embed}}
      template:
        metadata: {labels: {app: embed}}
        spec:
          containers:
            - name: embed
              image: registry.example/embeddings:1.5.0
              args: ["--model-id", "org/encoder-base", "--port", "6020"]
              ports: [{containerPort: 6020}]
    ---
    apiVersion: v1
    kind: Service
    metadata: {name: embed}
    spec:
      type: NodePort
      selector: {app: embed}
      ports: [{port: 6020, targetPort: 6020}]
    """)


def test_a_public_service_in_front_of_a_named_server_is_one_finding(tmp_path):
    """The server the rule names (a Hugging Face launcher by its --model-id) is reported once, not again as a server
    it cannot name."""
    assert severities(tmp_path, LAUNCHER, "GRPO820") == ["warning"]
