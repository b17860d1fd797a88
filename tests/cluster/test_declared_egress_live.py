"""Declared egress flows (global.network.egress) render NetworkPolicies the real API server admits: every
NetworkPolicy of a release with a namespace-and-pods flow and a network flow passes a server-side dry run
(admission and validation, nothing stored). Where the check stops: kwok runs no network plugin, so the policies
are validated, not enforced; which packets they let through is the chart tests' reading of the spec."""

from __future__ import annotations

import pytest
from grpo_stack.lint.engine import lint_values

from tests.chart.test_declared_egress import ENDPOINT, SHARED
from tests.cluster.kube_api import scratch_namespace
from tests.conftest import REPO_ROOT

NS = "declared-egress"


@pytest.fixture(scope="module")
def kube(control_plane):
    with scratch_namespace(control_plane, NS) as api:
        yield api


def test_the_api_server_admits_the_policies_declared_flows_render(kube, tmp_path):
    import yaml

    overlay = tmp_path / "egress.yaml"
    overlay.write_text(yaml.safe_dump({"global": {"components": {"fsxUtils": True},
                                                  "network": {"egress": [SHARED, ENDPOINT]}}}))
    result = lint_values([str(REPO_ROOT / "values" / "qwen3-8b.yaml"), str(overlay)], namespace=NS)
    assert not result.input_errors, result.input_errors
    policies = [o.obj for o in result.context.objects if o.kind == "NetworkPolicy"]
    declared = [p for p in policies if "other-team" in str(p["spec"]) or "10.1.0.0/16" in str(p["spec"])]
    assert len(declared) == 2
    for policy in policies:
        kube.create(policy, NS, dry_run=True)  # raises ApiException on a refusal
