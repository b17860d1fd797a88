"""Queueing with the real Kueue controller (sigs.k8s.io/kueue v0.17.0, built from Go modules: toolset "kueue"),
its webhooks on, in front of the real API server and KubeRay operator: a run in a LocalQueue is admitted whole;
a second run waits behind it and is admitted once the first ends; a run larger than the ClusterQueue can ever hold
stays suspended, and `grpo-lint --cluster` says so before it is installed. In cluster mode a queued RayCluster holds
its quota until its Workload is deactivated (a hand suspension is undone by Kueue).

"Once the first ends" is the first RayJob's Workload finishing, not its deletion: the first run's submitter exits 1
(kwok reports the container status, tests/cluster/test_job_mode_live.py says how), the operator marks the RayJob
Failed, Kueue sees it finished and releases its quota. Where the check stops: Kueue assigns flavors and quota; no
pod runs a container, and the ClusterQueue's flavor carries no node labels (the chart's instance-type selector does
the placement, as tests/cluster/test_placement_oracle.py checks).
"""

from __future__ import annotations

import atexit
import os
import time

import pytest
import yaml
from grpo_stack.preflight.run import preflight_many

from tests.cluster.kube_api import wait_for
from tests.cluster.releases import REPO_ROOT, HelmError, Release, prepare_namespace

VALUES = REPO_ROOT / "values" / "qwen3-8b.yaml"  # one p5en.48xlarge worker: 8 GPUs, 16 EFA
NS = "queued"
QUEUE = "team-a"
GPU_QUOTA = 8  # one run of the base values at a time
QUEUED = ["raycluster.dashboard.exposed=true", "global.run.mode=job", "global.run.ttlSecondsAfterFinished=0",
          f"global.run.queue={QUEUE}"]
EXIT = "grpo-stack.io/submitter-exit-code"
KUEUE = "kueue.x-k8s.io/v1beta2"


def kueue_objects(gpus: int = GPU_QUOTA) -> list[dict]:
    quotas = {"cpu": "1000", "memory": "20Ti", "nvidia.com/gpu": str(gpus), "vpc.amazonaws.com/efa": "64"}
    cq_spec: dict = {"namespaceSelector": {}, "resourceGroups": [{
        "coveredResources": list(quotas),
        "flavors": [{"name": "default-flavor",
                     "resources": [{"name": k, "nominalQuota": v} for k, v in quotas.items()]}]}]}
    return [
        {"apiVersion": KUEUE, "kind": "ResourceFlavor", "metadata": {"name": "default-flavor"}},
        {"apiVersion": KUEUE, "kind": "ClusterQueue", "metadata": {"name": "gpus"}, "spec": cq_spec},
        {"apiVersion": KUEUE, "kind": "LocalQueue", "metadata": {"name": QUEUE, "namespace": NS},
         "spec": {"clusterQueue": "gpus"}},
    ]


@pytest.fixture(scope="module")
def kueue_plane(kubectl_bin, tmp_path_factory):
    """A control plane of its own with Kueue started (its webhooks see every RayJob and RayCluster, so the
    session's shared control plane stays without them)."""
    from grpo_stack.localcluster import binaries
    from grpo_stack.localcluster.cluster import ControlPlane

    missing = [name for name in ("control-plane", "kueue") if not binaries.verified(name=name)]
    if missing:
        reason = f"toolsets {missing} are not built: run `make cluster-tools kueue-tools`"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    cp = ControlPlane(binaries.tools_dir(), kubectl_bin, tmp_path_factory.mktemp("kueue-plane"),
                      kueue=binaries.tools_dir("kueue"))
    atexit.register(cp.stop)
    cp.start()
    try:
        prepare_namespace(cp, NS)
        cp.apply(kueue_objects())
        yield cp
    finally:
        cp.stop()


def rayjob(cp, release: Release) -> dict:
    return cp.get("-n", NS, "rayjobs.ray.io", f"{release.name}-ray")


def workload(cp, release: Release) -> dict | None:
    owned = [w for w in cp.get("-n", NS, "workloads.kueue.x-k8s.io")["items"]
             if any(o.get("name") == f"{release.name}-ray" for o in w["metadata"].get("ownerReferences") or [])]
    return owned[0] if owned else None


def condition(obj: dict | None, kind: str) -> dict:
    return next((c for c in ((obj or {}).get("status") or {}).get("conditions") or [] if c["type"] == kind), {})


def admitted(cp, release: Release) -> bool:
    """Kueue's Workload says Admitted and the RayJob runs: Kueue unsuspends it by clearing `suspend` (false is
    left out of the stored object)."""
    return condition(workload(cp, release), "Admitted").get("status") == "True" and \
        not rayjob(cp, release)["spec"].get("suspend")


def test_second_run_waits_for_the_first_to_end(kueue_plane, helm_bin):
    cp = kueue_plane
    first = Release(cp, helm_bin, "first", NS, [VALUES], QUEUED)
    second = Release(cp, helm_bin, "second", NS, [VALUES], QUEUED)
    first.install()
    assert rayjob(cp, first)["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == QUEUE
    wait_for("Kueue to admit the first run", lambda: admitted(cp, first), timeout=90)
    first.wait_running()
    second.install()
    pending = wait_for("the second run's Workload to wait for quota", lambda: (
        w if condition(w := workload(cp, second), "QuotaReserved").get("status") == "False" else None), timeout=60)
    assert "nvidia.com/gpu" in condition(pending, "QuotaReserved").get("message", "")
    assert rayjob(cp, second)["spec"]["suspend"] is True
    assert not cp.get("-n", NS, "pods", "-l", "app.kubernetes.io/instance=second,app.kubernetes.io/name=ray-worker")[
        "items"], "a suspended RayJob has no pods"
    # The first run ends (its submitter exits 1): the operator fails the RayJob, Kueue finishes its Workload.
    cluster = rayjob(cp, first)["status"]["rayClusterName"]
    head = cp.get("-n", NS, "pods", "-l", f"ray.io/cluster={cluster},ray.io/node-type=head")["items"][0]
    cp.kubectl("-n", NS, "annotate", "pod", head["metadata"]["name"], f"{EXIT}=1")
    wait_for("the first run's Workload to finish", lambda: condition(workload(cp, first), "Finished").get(
        "status") == "True", timeout=90)
    wait_for("Kueue to admit the second run", lambda: admitted(cp, second), timeout=90)
    second.wait_running()
    for release in (first, second):
        release.uninstall()


def test_run_larger_than_the_queue_is_never_admitted_and_the_preflight_says_so(kueue_plane, helm_bin, tmp_path):
    cp = kueue_plane
    big = Release(cp, helm_bin, "big", NS, [VALUES], [*QUEUED, "global.cluster.nodes=2"])
    overlay = tmp_path / "big.yaml"
    overlay.write_text(yaml.safe_dump({"global": {"cluster": {"nodes": 2}, "run": {
        "mode": "job", "queue": QUEUE}}, "raycluster": {"dashboard": {"exposed": True}}}))
    result = preflight_many([[str(VALUES), str(overlay)]], "big", NS, str(cp.kubeconfig), None)
    queue_findings = [f for f in result.findings if f.code == "GRPO967"]
    assert len(queue_findings) == 1 and queue_findings[0].severity.value == "error"
    assert "can never admit the run: it needs 16 nvidia.com/gpu" in queue_findings[0].message
    assert "most any flavor holds, nominal quota plus borrowing limit, is 8" in queue_findings[0].message
    fits = tmp_path / "fits.yaml"
    fits.write_text(yaml.safe_dump({"global": {"run": {"mode": "job", "queue": QUEUE}},
                                    "raycluster": {"dashboard": {"exposed": True}}}))
    result = preflight_many([[str(VALUES), str(fits)]], "fits", NS, str(cp.kubeconfig), None)
    assert not [f for f in result.findings if f.code == "GRPO967"]
    big.install()
    pending = wait_for("Kueue to find no flavor for the run", lambda: (
        w if condition(w := workload(cp, big), "QuotaReserved").get("status") == "False" else None), timeout=60)
    assert "nvidia.com/gpu" in condition(pending, "QuotaReserved")["message"]
    assert rayjob(cp, big)["spec"]["suspend"] is True
    big.uninstall()


def test_preflight_names_a_missing_local_queue(kueue_plane, tmp_path):
    overlay = tmp_path / "nowhere.yaml"
    overlay.write_text(yaml.safe_dump({"global": {"run": {"mode": "job", "queue": "nowhere"}},
                                       "raycluster": {"dashboard": {"exposed": True}}}))
    result = preflight_many([[str(VALUES), str(overlay)]], "nowhere", NS, str(kueue_plane.kubeconfig), None)
    (finding,) = [f for f in result.findings if f.code == "GRPO967"]
    assert f"LocalQueue {NS}/nowhere does not exist" in finding.message


def raycluster(cp, release: Release) -> dict:
    return cp.get("-n", NS, "rayclusters.ray.io", f"{release.name}-ray")


def cluster_admitted(cp, release: Release) -> bool:
    return condition(workload(cp, release), "Admitted").get("status") == "True" and \
        not raycluster(cp, release)["spec"].get("suspend")


def ray_pods(cp, release: Release) -> list[dict]:
    return cp.get("-n", NS, "pods", "-l", f"ray.io/cluster={release.name}-ray")["items"]


def test_a_queued_long_lived_cluster_holds_its_quota_until_its_workload_is_deactivated(kueue_plane, helm_bin):
    """Cluster mode (docs/day-2.md, Queueing): the queue label on the RayCluster; Kueue suspends it at creation and
    admits it whole; it holds its quota for as long as it is admitted, training or not, so a second queued cluster
    waits with no pods. Suspending the RayCluster by hand gives nothing back: Kueue resumes a suspended job whose
    Workload is admitted. Deactivating the Workload (spec.active: false) does: Kueue suspends the cluster, its pods
    go, and the second cluster is admitted."""
    cp = kueue_plane
    first = Release(cp, helm_bin, "long-a", NS, [VALUES], [f"global.run.queue={QUEUE}"])
    second = Release(cp, helm_bin, "long-b", NS, [VALUES], [f"global.run.queue={QUEUE}"])
    first.install()
    assert raycluster(cp, first)["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == QUEUE
    wait_for("Kueue to admit the first cluster", lambda: cluster_admitted(cp, first), timeout=90)
    first.wait_running()
    second.install()
    pending = wait_for("the second cluster's Workload to wait for quota", lambda: (
        w if condition(w := workload(cp, second), "QuotaReserved").get("status") == "False" else None), timeout=60)
    assert "nvidia.com/gpu" in condition(pending, "QuotaReserved").get("message", "")
    assert raycluster(cp, second)["spec"]["suspend"] is True
    assert not ray_pods(cp, second), "a suspended RayCluster has no pods"

    cp.kubectl("-n", NS, "patch", "raycluster", f"{first.name}-ray", "--type", "merge", "-p",
               '{"spec":{"suspend":true}}')
    wait_for("Kueue to resume the cluster suspended by hand", lambda: cluster_admitted(cp, first), timeout=60)
    assert condition(workload(cp, second), "QuotaReserved").get("status") == "False"

    stop_cluster(cp, first)
    wait_for("the first cluster to be suspended and its pods to go", lambda: (
        raycluster(cp, first)["spec"].get("suspend") is True and not ray_pods(cp, first)), timeout=90)
    wait_for("Kueue to admit the second cluster", lambda: cluster_admitted(cp, second), timeout=90)
    second.wait_running()
    assert raycluster(cp, first)["spec"].get("suspend") is True, "a deactivated Workload stays suspended"
    for release in (first, second):
        release.uninstall()


def stop_cluster(cp, release: Release) -> None:
    """What docs/day-2.md tells users to run to give a queued cluster's GPUs back without uninstalling."""
    name = workload(cp, release)["metadata"]["name"]
    cp.kubectl("-n", NS, "patch", "workloads.kueue.x-k8s.io", name, "--type", "merge", "-p",
               '{"spec":{"active":false}}')


# How each Helm applies an upgrade: Helm 4 by server-side apply unless told otherwise (each way tried in turn on
# one pair of releases; client-side last, since the release then keeps that method), Helm 3 by a three-way merge.
UPGRADES = {"helm4": ("helm_bin", [(), ("--force-conflicts",), ("--server-side=false",)]), "helm3": ("helm3_bin", [()])}
CONFLICT = 'conflict with "(kueue|kuberay-operator)"'


@pytest.mark.parametrize("how", list(UPGRADES))
def test_an_upgrade_never_touches_a_queued_run(kueue_plane, request, how):
    """`helm upgrade` of queued job-mode releases (docs/day-2.md, Queueing). The KubeRay operator and, on
    admission, Kueue rewrite the RayJob's worker groups as their own field managers, so Helm 4's server-side apply
    refuses a plain upgrade with a conflict naming one of them; with `--server-side=false`, with
    `--force-conflicts` or with Helm 3 it goes through. Every way, the admitted run keeps its pods and stays
    admitted, and the run waiting for quota stays suspended: the chart sends the live RayJob's `suspend`, never
    `true` again over Kueue's admission (forced, that suspended the running job and replaced its cluster)."""
    cp = kueue_plane
    fixture, ways = UPGRADES[how]
    helm = request.getfixturevalue(fixture)
    running = Release(cp, helm, f"up-{how}", NS, [VALUES], QUEUED)
    waiting = Release(cp, helm, f"wait-{how}", NS, [VALUES], QUEUED)
    try:
        running.install()
        wait_for("Kueue to admit the run", lambda: admitted(cp, running), timeout=90)
        running.wait_running()
        waiting.install()
        wait_for("the second run to wait for quota", lambda: condition(workload(cp, waiting), "QuotaReserved").get(
            "status") == "False", timeout=60)
        pods = job_pod_uids(cp, running)
        assert pods
        for n, flags in enumerate(ways):
            for release in (running, waiting):
                if how == "helm4" and not flags:
                    with pytest.raises(HelmError, match=CONFLICT):
                        release.upgrade(f"global.job.trainer.saveFreq={7 + n}")
                else:
                    release.upgrade(f"global.job.trainer.saveFreq={7 + n}", flags=flags)
            time.sleep(10)  # what the operator and Kueue would do about it (suspend, delete), they do in seconds
            assert admitted(cp, running) and not rayjob(cp, running)["spec"].get("suspend"), flags
            assert job_pod_uids(cp, running) == pods, f"the upgrade {flags} restarted the run"
            assert rayjob(cp, waiting)["spec"]["suspend"] is True and not admitted(cp, waiting), flags
    finally:
        for release in (running, waiting):
            release.helm("uninstall", release.name, "-n", NS, "--ignore-not-found", "--wait", "--timeout", "120s")


def job_pod_uids(cp, release: Release) -> set[str]:
    """The pods of the cluster a RayJob made (its name is in the RayJob's status)."""
    name = (rayjob(cp, release).get("status") or {}).get("rayClusterName")
    return {p["metadata"]["uid"] for p in cp.get("-n", NS, "pods", "-l", f"ray.io/cluster={name}")["items"]} \
        if name else set()
