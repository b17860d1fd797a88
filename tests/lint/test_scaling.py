"""grpo-lint's work grows with the input, not with its square: counted, never timed.

A release of N small apps (a Deployment running as its own ServiceAccount with a ConfigMap mounted, the Service and
the NetworkPolicy in front of it) is linted at two sizes with every object's content counted each time a rule reads
it. Per object linted, the count must stay flat from N to 4N: a rule that compares every pod with every Service or
NetworkPolicy (as `policies_selecting`, the Service backends and the namespace references once did) reads each
object N times and fails here. The same holds for one release copied into N namespaces (a repository of
per-environment releases linted in one call), whose copies once paired up as N^2 namespace findings.
"""

from __future__ import annotations

import pytest
from grpo_stack.lint import release
from grpo_stack.render import RenderedObject

DIGEST = "sha256:" + "a" * 64


def app(i: int, namespace: str = "apps") -> str:
    return f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: app{i}, namespace: {namespace}}}
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
metadata: {{name: app{i}, namespace: {namespace}}}
---
apiVersion: v1
kind: ConfigMap
metadata: {{name: app{i}, namespace: {namespace}}}
data: {{port: "8000"}}
---
apiVersion: v1
kind: Service
metadata: {{name: app{i}, namespace: {namespace}}}
spec: {{selector: {{app: app{i}}}, ports: [{{port: 80, targetPort: 8000}}]}}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {{name: app{i}, namespace: {namespace}}}
spec: {{podSelector: {{matchLabels: {{app: app{i}}}}}, policyTypes: [Ingress]}}
"""


def one_namespace(apps: int) -> list[str]:
    return [app(i) for i in range(apps)]


def copies_in_namespaces(apps: int) -> list[str]:
    """A release of three apps, copied into apps/3 namespaces."""
    return [app(i % 3, namespace=f"env{i // 3}") for i in range(apps)]


def reads_per_object(tmp_path, monkeypatch, apps: int, layout=one_namespace) -> tuple[float, int]:
    reads = [0]

    class Counted(RenderedObject):
        def __getattribute__(self, name):
            if name == "obj":  # `kind` and `name` read it too
                reads[0] += 1
            return super().__getattribute__(name)

    monkeypatch.setattr(release, "RenderedObject", Counted)
    path = tmp_path / f"apps-{apps}.yaml"
    path.write_text("---\n".join(layout(apps)))
    result = release.lint_release([release.read_input(str(path))])
    assert len(result.findings) >= apps, "every app lacks hardening: the rules must have read every pod"
    namespace_findings = sum(f.code == "GRPO850" for f in result.findings)
    return reads[0] / (5 * apps), namespace_findings


@pytest.mark.parametrize("layout", [one_namespace, copies_in_namespaces])
def test_reads_per_object_stay_flat_from_n_to_4n(tmp_path, monkeypatch, layout):
    apps = 60
    small, _ = reads_per_object(tmp_path, monkeypatch, apps, layout)
    large, _ = reads_per_object(tmp_path, monkeypatch, 4 * apps, layout)
    assert large <= 1.25 * small, f"{small:.0f} reads per object at {apps} apps, {large:.0f} at {4 * apps}"


def templates_visited_per_object(tmp_path, monkeypatch, apps: int) -> float:
    """Pod templates handed out per object linted: `LintContext.pod_templates` builds its list once, so reading
    `.obj` does not count a rule that walks every pod template for each object (GRPO101 looked up one object's
    hostAliases that way); counting what is iterated does."""
    from grpo_stack.lint.context import LintContext

    visited = [0]

    class Counted(list):
        def __iter__(self):
            for item in super().__iter__():
                visited[0] += 1
                yield item

    built = LintContext.pod_templates
    monkeypatch.setattr(LintContext, "pod_templates", lambda self: Counted(built(self)))
    path = tmp_path / f"apps-{apps}.yaml"
    path.write_text("---\n".join(one_namespace(apps)))
    release.lint_release([release.read_input(str(path))])
    return visited[0] / (5 * apps)


def test_pod_templates_visited_per_object_stay_flat_from_n_to_4n(tmp_path, monkeypatch):
    apps = 60
    small = templates_visited_per_object(tmp_path, monkeypatch, apps)
    large = templates_visited_per_object(tmp_path, monkeypatch, 4 * apps)
    assert large <= 1.25 * small, f"{small:.1f} pod templates per object at {apps} apps, {large:.1f} at {4 * apps}"


def test_copies_of_a_release_in_their_own_namespaces_are_not_misplaced(tmp_path, monkeypatch):
    """Each copy's Service, ServiceAccount, ConfigMap and upstream URL name objects of its own namespace; the
    namesakes in the other namespaces are not references (GRPO850 paired every copy with every other)."""
    _, misplaced = reads_per_object(tmp_path, monkeypatch, 60, copies_in_namespaces)
    assert misplaced == 0


def test_locating_a_finding_reads_the_positions_of_its_own_document_only(tmp_path, monkeypatch):
    """Line numbers come from a second, position-keeping reading of the file; of a stream of 200 objects with one
    finding, only the document holding it is converted to positions (not all 200: that was a third of the CPU of
    a large lint whose files each had a finding)."""
    from grpo_stack import positions
    from grpo_stack.lint.steps import OBJECT_SCHEMA

    converted = []

    class Counted(positions.PosMap):
        def __init__(self):
            super().__init__()
            converted.append(self)

    monkeypatch.setattr(positions, "PosMap", Counted)
    maps = [f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cm{i}, namespace: apps}}\ndata: {{k: v}}\n"
            for i in range(200)]
    maps[117] = maps[117].replace("{k: v}", "{k: [v]}")
    path = tmp_path / "maps.yaml"
    path.write_text("---\n".join(maps))
    result = release.lint_release([release.read_input(str(path))])
    assert [(f.code, f.line) for f in result.findings] == [(OBJECT_SCHEMA[0], 117 * 5 + 4)]
    assert len(converted) == 3, f"{len(converted)} mappings converted: one ConfigMap's three, not 200 ConfigMaps'"
