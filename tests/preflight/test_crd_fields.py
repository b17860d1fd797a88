"""The chart's RayCluster against the KubeRay v1.7.0 CRD the chart targets: nothing the chart sets is a field
that CRD would prune (GRPO960's walk; the walk itself is checked against the API server's own pruning in
tests/cluster/test_preflight.py)."""

from __future__ import annotations

import json

import pytest
from grpo_stack.lint.engine import values_context
from grpo_stack.preflight.checks import unknown_fields

from tests.conftest import VALUES_FILES


@pytest.fixture(scope="module")
def spec_schema(raycluster_crd):
    return json.loads(raycluster_crd.read_text())["versions"]["v1"]["properties"]["spec"]


@pytest.mark.parametrize("values", VALUES_FILES, ids=lambda p: str(p))
def test_chart_sets_only_fields_kuberay_170_knows(values, spec_schema):
    ctx, _ = values_context([str(values)])
    clusters = ctx.of_kind("RayCluster")
    for o in clusters:
        assert list(unknown_fields(o.obj["spec"], spec_schema, "spec")) == [], o.name


def test_an_unknown_field_is_named_with_its_path(spec_schema):
    spec = {"headGroupSpec": {"rayStartParams": {}, "template": {"spec": {"containers": [{"name": "x", "bogus": 1}]}}},
            "upgradeStrategyy": {"type": "Recreate"}}
    assert sorted(unknown_fields(spec, spec_schema, "spec")) == [
        "spec.headGroupSpec.template.spec.containers.0.bogus", "spec.upgradeStrategyy"]
