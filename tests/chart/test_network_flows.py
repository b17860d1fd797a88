"""Default deny for every pod of the release; every allowed flow comes from ONE list (grpo-common.flows) and is
the table in docs/security.md.

Failures these prevent: a pod that no policy selects (the Ray pods had none: open ingress to the dashboard, GCS
and client ports, open egress), a flow added in one chart's policy and missing from the documented list, and a
documented flow that the chart does not actually admit.
"""

from __future__ import annotations

import json
import re

import pytest

from tests.conftest import RELEASE

FLOWS = "grpo-stack.io/flows"
DOC_START, DOC_END = "<!-- flows:start -->", "<!-- flows:end -->"
EVERYTHING = {
    "global.components.sandboxFusion": True, "global.components.rewardService": True,
    "global.components.fsxUtils": True, "global.components.vllm": True, "global.components.lmEval": True,
    "global.job.trainer.logger": ["console", "wandb"],
    "global.job.reward.kind": "external", "global.job.reward.url": "https://reward.example.com:8443/score",
    "raycluster.dashboard.exposed": True, "lm-eval.allowPublicHttps": True, "global.run.mode": "job",
    "global.job.supervision.events": {"enabled": True, "apiServerCidrs": ["10.0.16.0/20", "10.0.32.0/20"]},
    "global.job.supervision.stepMetricsPort": 9108,
    "global.monitoring": {"labels": {}, "interval": "30s", "prometheusNamespace": "monitoring",
                          "alerts": {"rewardErrorRatio": 0.05, "stallFactor": 3, "stepTimeFloorSeconds": 300,
                                     "gpuIdlePercent": 10, "gpuIdleMinutes": 15, "sandboxSaturationRatio": 0.1}},
}


def default_deny(rendered) -> dict:
    (policy,) = [o.obj for o in rendered.of_kind("NetworkPolicy") if o.name == f"{RELEASE}-default-deny"]
    return policy


def flows(rendered) -> list[dict]:
    return json.loads(default_deny(rendered)["metadata"]["annotations"][FLOWS])


def port_text(ports) -> str:
    if not ports:
        return "all"
    return ", ".join(f"{int(p['port'])}/{p.get('protocol', 'TCP')}" for p in ports)


def doc_rows(repo_root) -> set[tuple[str, str, str]]:
    text = (repo_root / "docs" / "security.md").read_text()
    table = text.split(DOC_START, 1)[1].split(DOC_END, 1)[0]
    rows = set()
    for line in table.splitlines():
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if len(cells) >= 4 and cells[0] not in ("from", "") and not set(cells[0]) <= {"-"}:
            rows.add((cells[0], cells[1], cells[2]))
    return rows


def test_default_deny_selects_every_pod_of_the_release(values_name, rendered_all):
    """Every pod template carries the release's instance label, so the default-deny policy isolates all of them."""
    policy = default_deny(rendered_all[values_name])
    assert policy["spec"]["policyTypes"] == ["Ingress", "Egress"]
    assert policy["spec"]["ingress"] == [] and policy["spec"]["egress"] == []
    selector = policy["spec"]["podSelector"]["matchLabels"]
    assert selector == {"app.kubernetes.io/instance": RELEASE}
    for o in rendered_all[values_name].objects:
        spec = o.obj.get("spec") or {}
        metas = []
        if o.kind == "Pod":
            metas = [o.obj["metadata"]]
        elif o.kind in ("Deployment", "Job"):
            metas = [spec["template"]["metadata"]]
        elif o.kind == "RayCluster":
            metas = [g["template"]["metadata"] for g in [spec["headGroupSpec"], *spec["workerGroupSpecs"]]]
        for meta in metas:
            assert meta["labels"].get("app.kubernetes.io/instance") == RELEASE, (o.kind, o.name)


def _peer_key(peer: dict) -> str:
    return json.dumps(peer, sort_keys=True)


def test_each_component_policy_admits_exactly_its_flows(render_values):
    """Every flow of the list appears in the target's ingress and the source's egress, and nothing else does."""
    rendered = render_values("qwen3-235b", EVERYTHING)
    listed = flows(rendered)
    policies = {o.obj["metadata"]["labels"]["app.kubernetes.io/component"]: o.obj
                for o in rendered.of_kind("NetworkPolicy") if o.name != f"{RELEASE}-default-deny"}
    for component, policy in policies.items():
        assert policy["spec"]["policyTypes"] == ["Ingress", "Egress"], component
        ingress = [f for f in listed if f["to"] == component]
        egress = [f for f in listed if f["from"] == component]
        assert len(policy["spec"]["ingress"]) == len(ingress), component
        assert len(policy["spec"]["egress"]) == len(egress), component
        for rule, flow in zip(policy["spec"]["ingress"], ingress, strict=True):
            assert (rule.get("ports") or []) == flow["ports"], (component, flow)
        for rule, flow in zip(policy["spec"]["egress"], egress, strict=True):
            assert (rule.get("ports") or []) == flow["ports"], (component, flow)
    # Every pod-backed endpoint of a flow has a policy of its own (so its side of the flow is enforced).
    endpoints = {f[k] for f in listed for k in ("from", "to")}
    outside = {"dns", "public", "namespace", "any-namespace", "prometheus", "kuberay-operator", "apiserver"}
    assert endpoints - outside <= set(policies)


def test_ray_pods_talk_freely_among_themselves_and_nowhere_else_unlisted(render_values):
    """NCCL, torch.distributed and vLLM pick random ports: all ports between this cluster's pods; the boundary
    is the dashboard (only when exposed, only from the namespace), metrics, DNS and the listed services."""
    rendered = render_values("qwen3-235b")
    (ray,) = [o.obj for o in rendered.of_kind("NetworkPolicy") if o.obj["metadata"]["labels"]
              ["app.kubernetes.io/component"] == "ray"]
    own = {"podSelector": {"matchLabels": {"grpo-stack.io/ray-cluster": f"{RELEASE}-ray"}}}
    assert ray["spec"]["podSelector"] == own["podSelector"]
    all_ports_in = [r for r in ray["spec"]["ingress"] if not r.get("ports")]
    all_ports_out = [r for r in ray["spec"]["egress"] if not r.get("ports")]
    assert [r["from"] for r in all_ports_in] == [[own]]
    assert [r["to"] for r in all_ports_out] == [[own]]
    admitted = {int(p["port"]) for r in ray["spec"]["ingress"] for p in r.get("ports") or []}
    assert admitted == {8080}, "only the metrics port is open beyond the cluster by default (no dashboard, GCS, client)"


def test_dashboard_exposure_is_namespace_only(render_values):
    rendered = render_values("qwen3-235b", {"raycluster.dashboard.exposed": True})
    (rc,) = rendered.of_kind("RayCluster")
    assert rc.obj["spec"]["headGroupSpec"]["rayStartParams"]["dashboard-host"] == "0.0.0.0"
    (ray,) = [o.obj for o in rendered.of_kind("NetworkPolicy") if o.name == f"{RELEASE}-ray"]
    dash = [r for r in ray["spec"]["ingress"] if any(int(p["port"]) == 8265 for p in r.get("ports") or [])]
    assert [r["from"] for r in dash] == [[{"podSelector": {}}]]


def test_sandbox_has_no_egress_at_all(render_values):
    """Model-written code must not reach the network, the API server or the instance metadata service."""
    rendered = render_values("qwen3-235b", EVERYTHING)
    (sandbox,) = [o.obj for o in rendered.of_kind("NetworkPolicy") if o.name == f"{RELEASE}-sandbox-fusion"]
    assert sandbox["spec"]["egress"] == []


def test_public_egress_excludes_cluster_ranges_and_metadata(render_values):
    rendered = render_values("qwen3-235b", EVERYTHING)
    blocks = [p["ipBlock"] for o in rendered.of_kind("NetworkPolicy") if o.name != f"{RELEASE}-ray-head"
              for r in o.obj["spec"].get("egress") or [] for p in r.get("to") or [] if "ipBlock" in p]
    assert blocks
    for b in blocks:
        assert b["cidr"] == "0.0.0.0/0"
        assert {"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "100.64.0.0/10"} <= set(b["except"])


def test_only_the_head_reaches_the_api_server_and_only_with_events_on(render_values):
    """global.job.supervision.events: the head's own policy admits exactly the given API server networks on their
    port; no other policy (the workers run model-written rewards) names them. Off: no such policy, no token."""
    rendered = render_values("qwen3-235b", EVERYTHING)
    (head,) = [o.obj for o in rendered.of_kind("NetworkPolicy") if o.name == f"{RELEASE}-ray-head"]
    assert head["spec"]["podSelector"]["matchLabels"] == {"grpo-stack.io/ray-cluster": f"{RELEASE}-ray",
                                                          "ray.io/node-type": "head"}
    networks = [{"ipBlock": {"cidr": "10.0.16.0/20"}}, {"ipBlock": {"cidr": "10.0.32.0/20"}}]
    assert head["spec"]["egress"] == [{"to": networks, "ports": [{"port": 443}]}]
    others = json.dumps([o.obj for o in rendered.of_kind("NetworkPolicy") if o.name != f"{RELEASE}-ray-head"])
    assert "10.0.16.0/20" not in others
    off = render_values("qwen3-235b")
    assert not [o for o in off.of_kind("NetworkPolicy") if o.name == f"{RELEASE}-ray-head"]
    assert not off.of_kind("Role") and not off.of_kind("ServiceAccount")
    (rc,) = off.of_kind("RayCluster")
    assert rc.obj["spec"]["headGroupSpec"]["template"]["spec"]["automountServiceAccountToken"] is False


def test_external_reward_port_comes_from_the_url(render_values):
    rendered = render_values("qwen3-235b", EVERYTHING)
    external = [f for f in flows(rendered) if "reward.kind external" in f["why"]]
    assert {int(p["port"]) for f in external for p in f["ports"]} == {8443}


def test_docs_flow_table_lists_every_flow(render_values, repo_root):
    """docs/security.md's table is the flow list (everything switched on): same (from, to, ports) rows."""
    listed = {(f["from"], f["to"], "URL port" if "reward.kind external" in f["why"] else port_text(f["ports"]))
              for f in flows(render_values("qwen3-235b", EVERYTHING))}
    documented = doc_rows(repo_root)
    wanted = "\n".join(f"| `{a}` | `{b}` | {p} |" for a, b, p in sorted(listed))
    assert documented == listed, f"update the table between {DOC_START} and {DOC_END}; rows:\n{wanted}"


@pytest.mark.parametrize("values_name_", ["qwen3-8b", "qwen3-235b", "miles-qwen3-4b"])
def test_flow_whys_are_sentences_not_placeholders(values_name_, rendered_all):
    for f in flows(rendered_all[values_name_]):
        assert len(f["why"]) > 15 and not re.search(r"TODO|TBD", f["why"]), f
