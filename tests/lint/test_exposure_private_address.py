"""GRPO820 reads a load balancer annotation whose value names a private address rather than saying "internal":
Alibaba Cloud's `alibaba-cloud-loadbalancer-address-type: intranet` makes the LoadBalancer internal (a warning, as any
internal load balancer), `internet` leaves it public (an error). Where the check stops: the annotation's meaning is
read from Alibaba Cloud's cloud controller manager documentation; no cloud provisions a load balancer here."""

from __future__ import annotations

import textwrap

from tests.lint.fixtures import severities

SERVER = textwrap.dedent("""\
    apiVersion: apps/v1
    kind: Deployment
    metadata: {{name: wren-vllm}}
    spec:
      selector: {{matchLabels: {{app: wren-vllm}}}}
      template:
        metadata: {{labels: {{app: wren-vllm}}}}
        spec:
          containers:
            - name: vllm
              image: vllm/vllm-openai:v0.11.0
              args: [--model, /models/wren-8b]
              ports: [{{containerPort: 8000}}]
    ---
    apiVersion: v1
    kind: Service
    metadata:
      name: wren-vllm
      annotations: {{service.beta.kubernetes.io/alibaba-cloud-loadbalancer-address-type: {address}}}
    spec:
      type: LoadBalancer
      selector: {{app: wren-vllm}}
      ports: [{{port: 8000, targetPort: 8000}}]
    """)


def test_an_intranet_address_makes_the_load_balancer_internal(tmp_path):
    found = severities(tmp_path, SERVER.format(address="intranet"), "GRPO820")
    assert found and set(found) == {"warning"}


def test_an_internet_address_leaves_it_public(tmp_path):
    assert "error" in severities(tmp_path, SERVER.format(address="internet"), "GRPO820")
