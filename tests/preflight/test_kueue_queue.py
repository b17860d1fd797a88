"""GRPO967's verdict on the ClusterQueue, one decision at a time: borrowing counts only inside a cohort and only up
to its limit; an unlimited cohort is never called `never`; an uncovered GPU is an error, another uncovered resource
a warning naming Kueue's exclusion setting. The objects are what the API server returns (v1beta2); the same check
against a real API server holding a real ClusterQueue is tests/cluster/test_kueue.py."""

from __future__ import annotations

import pytest
import yaml
from grpo_stack.lint.engine import values_context
from grpo_stack.lint.finding import Severity
from grpo_stack.preflight.kueue import queue

from tests.conftest import REPO_ROOT

NS = "team-a"
API = "/apis/kueue.x-k8s.io/v1beta2"


class Objects:
    """The GETs the check makes, answered from a dict (None: 404, as the client returns it)."""

    def __init__(self, objects: dict[str, dict]):
        self.objects = {API: {"kind": "APIResourceList"}, **objects}

    def get(self, path: str, query=None):
        return self.objects.get(path)


def cluster_queue(gpus: str, borrowing: str | None = None, cohort: str | None = None,
                  covered=("cpu", "memory", "nvidia.com/gpu", "vpc.amazonaws.com/efa")) -> dict:
    quotas = {"cpu": "1000", "memory": "20Ti", "nvidia.com/gpu": gpus, "vpc.amazonaws.com/efa": "64"}
    resources = [{"name": k, "nominalQuota": v, **({"borrowingLimit": borrowing} if borrowing and
                                                   k == "nvidia.com/gpu" else {})}
                 for k, v in quotas.items() if k in covered]
    spec = {"resourceGroups": [{"coveredResources": list(covered),
                                "flavors": [{"name": "f", "resources": resources}]}]}
    if cohort:
        spec["cohortName"] = cohort
    return {f"{API}/namespaces/{NS}/localqueues/q": {"spec": {"clusterQueue": "cq"}},
            f"{API}/clusterqueues/cq": {"spec": spec}}


@pytest.fixture(scope="module")
def two_nodes(tmp_path_factory):
    """values/qwen3-8b.yaml on two nodes in LocalQueue q: 16 GPUs."""
    overlay = tmp_path_factory.mktemp("kueue") / "queued.yaml"
    overlay.write_text(yaml.safe_dump({"global": {"cluster": {"nodes": 2}, "run": {"mode": "job", "queue": "q"}},
                                       "raycluster": {"dashboard": {"exposed": True}}}))
    ctx, _ = values_context([str(REPO_ROOT / "values" / "qwen3-8b.yaml"), str(overlay)], namespace=NS)
    return ctx


def verdict(ctx, objects: dict) -> tuple[list, list[str]]:
    notes: list[str] = []
    return list(queue(Objects(objects), ctx, notes)), notes


def test_without_a_cohort_borrowing_limit_is_not_counted(two_nodes):
    hits, _ = verdict(two_nodes, cluster_queue("8", borrowing="8"))
    assert [h.severity for h in hits] == [Severity.ERROR]
    assert "needs 16 nvidia.com/gpu" in hits[0].message and "is 8" in hits[0].message


def test_in_a_cohort_nominal_plus_borrowing_limit_admits(two_nodes):
    hits, _ = verdict(two_nodes, cluster_queue("8", borrowing="8", cohort="org"))
    assert hits == []
    hits, _ = verdict(two_nodes, cluster_queue("8", borrowing="4", cohort="org"))
    assert "is 12" in hits[0].message


def test_unlimited_borrowing_is_not_called_never(two_nodes):
    hits, notes = verdict(two_nodes, cluster_queue("8", cohort="org"))
    assert hits == []
    assert any("borrow without limit from cohort org" in n for n in notes)


def test_uncovered_gpu_is_an_error_and_other_resources_a_warning(two_nodes):
    hits, _ = verdict(two_nodes, cluster_queue("16", covered=("cpu", "memory", "vpc.amazonaws.com/efa")))
    assert [h.severity for h in hits] == [Severity.ERROR] and "covers no nvidia.com/gpu" in hits[0].message
    hits, _ = verdict(two_nodes, cluster_queue("16", covered=("cpu", "memory", "nvidia.com/gpu")))
    assert [h.severity for h in hits] == [Severity.WARNING]
    assert "vpc.amazonaws.com/efa" in hits[0].message and "excludeResourcePrefixes" in hits[0].message


def test_no_kueue_api_and_missing_queues_are_errors(two_nodes):
    notes: list[str] = []
    hits = list(queue(type("NoKueue", (), {"get": lambda self, path, query=None: None})(), two_nodes, notes))
    assert "Kueue is not installed" in hits[0].message
    hits, _ = verdict(two_nodes, {})
    assert f"LocalQueue {NS}/q does not exist" in hits[0].message
    hits, _ = verdict(two_nodes, {f"{API}/namespaces/{NS}/localqueues/q": {"spec": {"clusterQueue": "cq"}}})
    assert "ClusterQueue 'cq', which does not exist" in hits[0].message
