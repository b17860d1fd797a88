"""`helm upgrade` (Helm 3.17.3 here; Helm 4.1.4 installs in test_release_lifecycle.py) against the real API server
and the served KubeRay operator: what the RayCluster and its pods do when a Ray pod spec changes, and when only
the evaluation or the reward service changes.

KubeRay v1.5.0 (the newest the Go module proxy serves) has no `upgradeStrategy`: v1.6.0 added it, and the chart
sets `Recreate` for v1.7.0. The API server here validates and keeps the field (the v1.7.0 CRD schema); the v1.5.0
operator ignores it and leaves the running pods alone. The test asserts exactly that; pod recreation on upgrade is
documented as needing KubeRay >= v1.6.0 (docs/control-plane.md) and is not claimed by any test here.
"""

from __future__ import annotations

import time

import pytest

from tests.cluster.conftest import namespace_for
from tests.cluster.releases import REPO_ROOT, Release, prepare_namespace

VALUES = REPO_ROOT / "values" / "qwen3-30b.yaml"  # Ray cluster and the reward service
CONFIG_HASH = "grpo-stack.io/config-hash"
# How long the operator is given to act on a changed RayCluster before its pods are read back.
RECONCILE_WINDOW_S = 20


@pytest.fixture(scope="module")
def release(node_pool, helm3_bin):
    namespace = namespace_for("upgrade")
    prepare_namespace(node_pool, namespace)
    rel = Release(node_pool, helm3_bin, "grpo", namespace, [VALUES])
    rel.install()
    rel.wait_running()
    yield rel
    rel.helm("uninstall", rel.name, "-n", namespace, "--ignore-not-found")
    node_pool.kubectl("delete", "namespace", namespace, "--wait=false", check=False)


def _raycluster(rel: Release) -> dict:
    return rel.cp.get("-n", rel.namespace, "rayclusters.ray.io", "-l", f"app.kubernetes.io/instance={rel.name}")[
        "items"][0]


def _ray_pods(rel: Release, cluster: str) -> dict[str, dict]:
    pods = rel.cp.get("-n", rel.namespace, "pods", "-l", f"ray.io/cluster={cluster}")["items"]
    return {p["metadata"]["uid"]: p for p in pods}


def _sent_raycluster(rel: Release) -> str:
    """The RayCluster document of `helm get manifest`, as text: what Helm sent, byte for byte."""
    text = rel.helm("get", "manifest", rel.name, "-n", rel.namespace)
    return next(doc for doc in text.split("\n---\n") if "\nkind: RayCluster\n" in f"\n{doc}")


@pytest.mark.parametrize("change", [
    pytest.param(("reward-service.replicas=3",), id="reward-service-replicas"),
    pytest.param(("global.components.vllm=true", "global.components.lmEval=true"), id="eval-components"),
])
def test_eval_or_reward_change_leaves_the_raycluster_untouched(release, change):
    """An upgrade that changes only the reward service or the evaluation components: Helm sends the same
    RayCluster (its manifest byte for byte), the stored object keeps its spec, labels, annotations and
    generation, and the operator keeps every Ray pod."""
    before = _raycluster(release)
    sent_before = _sent_raycluster(release)
    pods_before = _ray_pods(release, before["metadata"]["name"])
    release.upgrade(*change)
    release.wait_running()
    after = _raycluster(release)
    assert _sent_raycluster(release) == sent_before
    assert after["spec"] == before["spec"]
    assert after["metadata"]["generation"] == before["metadata"]["generation"]
    for key in ("labels", "annotations"):
        assert after["metadata"].get(key) == before["metadata"].get(key), key
    assert set(_ray_pods(release, after["metadata"]["name"])) == set(pods_before)


def test_pod_spec_change_reaches_the_raycluster_and_v1_5_keeps_the_pods(release):
    """An upgrade that changes a Ray pod spec (NCCL_DEBUG) changes the RayCluster the operator acts on: its pod
    templates and their config hash, a new generation; `spec.upgradeStrategy: Recreate` is stored (v1.7.0 schema).
    The served operator, v1.5.0, predates upgradeStrategy: the running Ray pods stay (same UIDs, old hash)."""
    before = _raycluster(release)
    name = before["metadata"]["name"]
    pods_before = _ray_pods(release, name)
    release.upgrade("raycluster.nccl.debug=INFO")
    after = _raycluster(release)
    assert after["metadata"]["generation"] > before["metadata"]["generation"]
    assert after["spec"]["upgradeStrategy"] == {"type": "Recreate"}
    templates = [("head", before["spec"]["headGroupSpec"]["template"], after["spec"]["headGroupSpec"]["template"])]
    templates += [(g["groupName"], g["template"], h["template"])
                  for g, h in zip(before["spec"]["workerGroupSpecs"], after["spec"]["workerGroupSpecs"], strict=True)]
    assert any(old["spec"] != new["spec"] for _, old, new in templates)
    for group, old, new in templates:
        assert old["metadata"]["annotations"][CONFIG_HASH] != new["metadata"]["annotations"][CONFIG_HASH], group
    time.sleep(RECONCILE_WINDOW_S)
    pods_after = _ray_pods(release, name)
    assert set(pods_after) == set(pods_before), "the v1.5.0 operator recreated Ray pods"
    old_hash = before["spec"]["headGroupSpec"]["template"]["metadata"]["annotations"][CONFIG_HASH]
    heads = [p for p in pods_after.values() if p["metadata"]["labels"].get("ray.io/node-type") == "head"]
    assert heads[0]["metadata"]["annotations"][CONFIG_HASH] == old_hash
