"""global.network.egress: a typed flow to a peer outside the release (another namespace's pods, a network) is
admitted by exactly the `from` component's NetworkPolicy, nowhere else, and listed on the default-deny policy;
the schema refuses a flow that is not one (both kinds of peer, none, no port, from the sandbox)."""

from __future__ import annotations

import json

import pytest
from grpo_stack.render import RenderError, render
from grpo_stack.values import schema_violations

from tests.conftest import RELEASE

SHARED = {"name": "shared-reward", "from": "ray", "to": {"namespace": "other-team", "podLabels": {"app": "reward"}},
          "ports": [{"port": 8000}], "why": "the team's shared reward server"}
ENDPOINT = {"name": "s3-endpoint", "from": "fsx-utils", "to": {"cidr": "10.1.0.0/16", "exceptCidrs": ["10.1.2.0/24"]},
            "ports": [{"port": 443, "protocol": "TCP"}], "why": "the S3 VPC endpoint for staging"}
FLOWS = {"global.network": {"egress": [SHARED, ENDPOINT]}, "global.components.fsxUtils": True}


def policies(rendered) -> dict[str, dict]:
    return {o.name: o.obj for o in rendered.of_kind("NetworkPolicy")}


def test_a_flow_to_another_namespace_opens_only_the_source_pods_egress(render_values):
    rendered = render_values("qwen3-8b", FLOWS)
    by_name = policies(rendered)
    ray = by_name[f"{RELEASE}-ray"]["spec"]
    declared = [r for r in ray["egress"] if r.get("ports") == [{"port": 8000}] and "namespaceSelector" in r["to"][0]]
    assert declared == [{"to": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "other-team"}},
                                 "podSelector": {"matchLabels": {"app": "reward"}}}], "ports": [{"port": 8000}]}]
    fsx = by_name[f"{RELEASE}-fsx-utils"]["spec"]
    assert {"to": [{"ipBlock": {"cidr": "10.1.0.0/16", "except": ["10.1.2.0/24"]}}],
            "ports": [{"port": 443, "protocol": "TCP"}]} in fsx["egress"]
    others = json.dumps({n: p["spec"] for n, p in by_name.items()
                         if n not in (f"{RELEASE}-ray", f"{RELEASE}-fsx-utils", f"{RELEASE}-default-deny")})
    assert "other-team" not in others and "10.1.0.0/16" not in others
    assert not any("other-team" in json.dumps(p["spec"].get("ingress")) for p in by_name.values())
    listed = json.loads(by_name[f"{RELEASE}-default-deny"]["metadata"]["annotations"]["grpo-stack.io/flows"])
    assert {f["to"] for f in listed if f["to"].startswith("egress:")} == {"egress:shared-reward", "egress:s3-endpoint"}
    assert all("global.network.egress" in f["why"] for f in listed if f["to"].startswith("egress:"))


def test_without_declared_flows_nothing_changes(render_values):
    assert policies(render_values("qwen3-8b")) == policies(render_values("qwen3-8b", {"global.network": {}}))


@pytest.mark.parametrize(("flow", "reason"), [
    ({**SHARED, "to": {"namespace": "x", "cidr": "10.0.0.0/8"}}, "not both"),
    ({**SHARED, "to": {"namespace": "x", "exceptCidrs": ["10.0.0.0/8"]}}, "only with cidr"),
    ({**SHARED, "to": {}}, "non-empty"),
    ({**SHARED, "to": {"podLabels": {}}}, "non-empty"),
    ({**SHARED, "ports": []}, "non-empty"),
    ({**SHARED, "from": "sandbox-fusion"}, "is not one of"),
    ({**SHARED, "to": {"cidr": "10.0.0.0/99x"}}, "does not match"),
    ({k: v for k, v in SHARED.items() if k != "why"}, "is required"),
])
def test_the_schema_refuses_a_flow_that_is_not_one(shipped_values, flow, reason):
    values = json.loads(json.dumps(shipped_values["qwen3-8b"]))
    values["global"]["network"] = {"egress": [flow]}
    from grpo_stack.render import merged_values

    messages = [v.message for v in schema_violations(merged_values(values))]
    assert any(reason in m for m in messages), messages
    with pytest.raises(RenderError):
        render(values)  # Helm's own schema check refuses it too
