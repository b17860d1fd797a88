"""GRPO872 against the real KubeRay operator: a RayCluster whose two worker groups share a groupName, applied to the
local control plane, never settles at the workers its groups ask for, where the same cluster with the groups named
apart does. The operator finds a group's pods by the `ray.io/group` label it gives them, so both groups count one
set of pods (raycluster_controller.go reconcilePods).

Where the check stops: the control plane runs the operator without its validating webhook (as KubeRay's Helm chart
does by default), so the webhook's own refusal ("worker group names must be unique") is checked against its source
only (pkg/webhooks/v1/raycluster_webhook.go, v1.5.0); the pods are kwok's, which never run Ray.
"""

from __future__ import annotations

import time

import pytest
import yaml

from tests.cluster.conftest import namespace_for
from tests.cluster.kube_api import scratch_namespace, wait_for
from tests.lint.fixtures import FIXTURES, lint_fixture

CODE = "GRPO872"
IMAGE = "registry.k8s.io/pause:3.10"


def _cluster(second_group: str) -> dict:
    """The bad fixture's RayCluster on small CPU pods, its second group named `second_group`."""
    path = FIXTURES / CODE / "bad-group-repeated.yaml"
    cluster = next(d for d in yaml.safe_load_all(path.read_text()) if d and d["kind"] == "RayCluster")
    small = {"requests": {"cpu": "50m", "memory": "32Mi"}}
    for spec in (cluster["spec"]["headGroupSpec"], *cluster["spec"]["workerGroupSpecs"]):
        for c in spec["template"]["spec"]["containers"]:
            c.update(image=IMAGE, resources=small)
    cluster["spec"]["workerGroupSpecs"][1]["groupName"] = second_group
    cluster["metadata"].pop("namespace", None)
    return cluster


def _workers(kube, ns: str) -> list[dict]:
    return [p for p in kube.list("v1", "Pod", ns, label_selector="ray.io/node-type=worker")
            if not (p.get("metadata") or {}).get("deletionTimestamp")]


def test_the_rule_reports_the_repeated_group_this_test_applies():
    assert [f for f in lint_fixture(FIXTURES / CODE / "bad-group-repeated.yaml").findings if f.code == CODE]


@pytest.mark.parametrize(("second", "settles"), [("transcribe-large", True), ("transcribe", False)],
                         ids=["named-apart", "name-repeated"])
def test_the_operator_settles_only_when_the_group_names_differ(node_pool, second, settles):
    ns = namespace_for("g872", second)
    with scratch_namespace(node_pool, ns) as kube:
        cluster = _cluster(second)
        wanted = sum(g["replicas"] for g in cluster["spec"]["workerGroupSpecs"])
        kube.create(cluster, ns)
        if settles:
            wait_for("the workers of both groups", lambda: len(_workers(kube, ns)) == wanted, timeout=90)
            return
        # One set of pods for both groups: the operator creates for the larger group and trims for the smaller in
        # turn, so the workers the two groups ask for are never all there once it has started creating them.
        wait_for("the operator's first workers", lambda: _workers(kube, ns), timeout=90)
        counts = set()
        for _ in range(20):
            counts.add(len(_workers(kube, ns)))
            time.sleep(0.5)
        assert wanted not in counts, counts
