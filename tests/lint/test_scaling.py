"""grpo-lint's work grows with the input, not with its square: counted, never timed.

A release of N small apps (a Deployment running as its own ServiceAccount with a ConfigMap mounted, the Service and
the NetworkPolicy in front of it) is linted at two sizes with every object's content counted each time a rule reads
it. Per object linted, the count must stay flat from N to 4N: a rule that compares every pod with every Service or
NetworkPolicy (as `policies_selecting`, the Service backends and the namespace references once did) reads each
object N times and fails here.
"""

from __future__ import annotations

import pytest
from grpo_stack.lint import release
from grpo_stack.render import RenderedObject

DIGEST = "sha256:" + "a" * 64


def app(i: int) -> str:
    return f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: app{i}, namespace: apps}}
spec:
  selector: {{matchLabels: {{app: app{i}}}}}
  template:
    metadata: {{labels: {{app: app{i}, tier: web}}}}
    spec:
      serviceAccountName: app{i}
      containers:
      - name: c
        image: registry.example.com/app@{DIGEST}
        command: ["python", "serve.py", "--upstream", "http://app{i + 1}:80/"]
        volumeMounts: [{{name: conf, mountPath: /etc/app}}]
      volumes: [{{name: conf, configMap: {{name: app{i}}}}}]
---
apiVersion: v1
kind: ServiceAccount
metadata: {{name: app{i}, namespace: apps}}
---
apiVersion: v1
kind: ConfigMap
metadata: {{name: app{i}, namespace: apps}}
data: {{port: "8000"}}
---
apiVersion: v1
kind: Service
metadata: {{name: app{i}, namespace: apps}}
spec: {{selector: {{app: app{i}}}, ports: [{{port: 80, targetPort: 8000}}]}}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {{name: app{i}, namespace: apps}}
spec: {{podSelector: {{matchLabels: {{app: app{i}}}}}, policyTypes: [Ingress]}}
"""


def reads_per_object(tmp_path, monkeypatch, apps: int) -> float:
    reads = [0]

    class Counted(RenderedObject):
        def __getattribute__(self, name):
            if name == "obj":  # `kind` and `name` read it too
                reads[0] += 1
            return super().__getattribute__(name)

    monkeypatch.setattr(release, "RenderedObject", Counted)
    path = tmp_path / f"apps-{apps}.yaml"
    path.write_text("---\n".join(app(i) for i in range(apps)))
    result = release.lint_release([release.read_input(str(path))])
    assert len(result.findings) >= apps, "every app lacks hardening: the rules must have read every pod"
    return reads[0] / (5 * apps)


@pytest.mark.parametrize("apps", [60])
def test_reads_per_object_stay_flat_from_n_to_4n(tmp_path, monkeypatch, apps):
    small = reads_per_object(tmp_path, monkeypatch, apps)
    large = reads_per_object(tmp_path, monkeypatch, 4 * apps)
    assert large <= 1.25 * small, f"{small:.0f} reads per object at {apps} apps, {large:.0f} at {4 * apps}"
