"""Job mode on the real API server and the real KubeRay operator: the RayJob is admitted, reconciled into the pods
the RayCluster of cluster mode gets, and, once it ends, its cluster is deleted (the GPUs freed).

How a RayJob ends in this tier: kwok runs no container, so neither the in-pod submit nor a head pod's Ray exists.
In SidecarMode the operator learns that the submitter ended from the head pod's `ray-job-submitter` container status
(rayjob_controller.go checkSidecarContainerStatus); kwok, standing in for the kubelet, reports that container
terminated with the exit code the test puts in the pod's `grpo-stack.io/submitter-exit-code` annotation
(grpo_stack/localcluster/stages/ray-submitter-exit.yaml). A failed submitter fails the RayJob by itself. A run that
succeeds is the operator's other path: it asks the head's dashboard for the Ray job (GetJobInfo, through the head
Service's cluster name) and completes the RayJob only when Ray says SUCCEEDED. That name reaches a real Ray head on
loopback through the local cluster's service proxy (grpo_stack/localcluster/serviceproxy.py), and the Ray job there
carries the RayJob's own job ID. The RayJob's status is written only by the operator.
Where it stops: the Ray job on that head is a one-line command, not the entrypoint the RayJob names (the in-pod
submit, whose exit status is the training run's: tests/recipes against a real Ray head, tests/loop with real verl).
"""
from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.cluster.kube_api import wait_for
from tests.cluster.releases import REPO_ROOT, HelmError, Release, prepare_namespace
from tests.rayhead import RayHead

VALUES = REPO_ROOT / "values" / "qwen3-8b.yaml"
EXPOSED = ["raycluster.dashboard.exposed=true"]
JOB = [*EXPOSED, "global.run.mode=job", "global.run.ttlSecondsAfterFinished=0"]
SUBMITTER = "ray-job-submitter"  # KubeRay utils.SubmitterContainerName
EXIT = "grpo-stack.io/submitter-exit-code"


@pytest.fixture(scope="module")
def dashboard_head():
    """A real Ray head on loopback, dashboard and job API on: the Ray the operator asks about a RayJob's job. Not
    the `ray` group's head (tests/conftest.py): one CPU, one echo job and no verl run, alive for this module only,
    in the control-plane process."""
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    head = RayHead(bin_dir / "ray", gpus=0, cpus=1, env=env)
    head.start(head.accepts_a_job, timeout=240)
    yield head
    head.stop()


def rayjob(cp, release: Release) -> dict:
    return cp.get("-n", release.namespace, "rayjobs.ray.io", f"{release.name}-ray")


@contextmanager
def running_job(cp, helm_bin, name: str, namespace: str, sets: list[str] = JOB) -> Iterator[Release]:
    """A job-mode release installed into a prepared namespace, its pods running; uninstalled afterwards."""
    release = Release(cp, helm_bin, name, namespace, [VALUES], sets)
    prepare_namespace(cp, release.namespace)
    release.install()
    try:
        release.wait_running()
        yield release
    finally:
        release.uninstall()


def job_status_in(cp, release: Release, what: str, *states: str) -> dict:
    """The RayJob's status once the operator has put it in one of `states` (jobDeploymentStatus)."""
    return wait_for(what, lambda: (
        s if (s := rayjob(cp, release).get("status") or {}).get("jobDeploymentStatus") in states else None),
        timeout=90)


def wait_for_freed(cp, namespace: str, cluster: str) -> None:
    """The RayJob's cluster deleted by the operator (shutdownAfterJobFinishes) and its pods gone."""
    wait_for("the RayJob's cluster to be deleted (shutdownAfterJobFinishes)", lambda: cp.kubectl(
        "-n", namespace, "get", "rayclusters.ray.io", cluster, check=False).returncode != 0, timeout=90)
    wait_for("its pods to be gone", lambda: not ray_pods(cp, namespace, cluster), timeout=90)


def ray_pods(cp, namespace: str, cluster: str) -> dict[str, dict]:
    items = cp.get("-n", namespace, "pods", "-l", f"ray.io/cluster={cluster}")["items"]
    return {p["metadata"]["labels"]["ray.io/node-type"]: p for p in items}


def modulo_names(pod: dict, cluster: str, namespace: str) -> dict:
    """What the pod runs, its generated names (cluster, namespace, node) made placeholders. The chart's own
    grpo-stack.io/ray-cluster label is the same in both modes and is compared as it is."""
    labels = dict(pod["metadata"].get("labels") or {})
    chart_label = labels.pop("grpo-stack.io/ray-cluster")
    text = json.dumps({"labels": labels, "annotations": pod["metadata"].get("annotations"),
                       "spec": {k: v for k, v in pod["spec"].items() if k != "nodeName"}}, sort_keys=True)
    # The operator's usage-stats tag names the CRD that made the pod (kuberay_crd=RayCluster | RayJob).
    for crd in ("RayJob", "RayCluster"):
        text = text.replace(f"kuberay_crd={crd}", "kuberay_crd=<crd>")
    out = json.loads(text.replace(cluster, "<cluster>").replace(namespace, "<namespace>"))
    out["labels"]["grpo-stack.io/ray-cluster"] = chart_label
    return out


@pytest.fixture(scope="module")
def installed(control_plane, helm_bin):
    cp = control_plane
    releases = (Release(cp, helm_bin, "grpo", "jobmode-cluster", [VALUES], EXPOSED),
                Release(cp, helm_bin, "grpo", "jobmode-job", [VALUES], JOB))
    for release in releases:
        prepare_namespace(cp, release.namespace)
        release.install()
    try:
        yield releases
    finally:
        for release in releases:
            release.uninstall()


def test_rayjob_gets_the_pods_the_raycluster_gets(control_plane, installed):
    cp = control_plane
    cluster_release, job_release = installed
    cluster_release.wait_running()
    job_release.wait_running()
    generated = rayjob(cp, job_release)["status"]["rayClusterName"]
    assert generated.startswith("grpo-ray-")  # KubeRay's `<rayjob>-<random>`
    as_cluster = {role: modulo_names(p, "grpo-ray", cluster_release.namespace)
                  for role, p in ray_pods(cp, cluster_release.namespace, "grpo-ray").items()}
    as_job = {role: modulo_names(p, generated, job_release.namespace)
              for role, p in ray_pods(cp, job_release.namespace, generated).items()}
    assert set(as_job) == set(as_cluster) == {"head", "worker"}
    assert as_job["worker"] == as_cluster["worker"]
    # SidecarMode's one addition to the head: the submitter container, and restartPolicy Never (KubeRay's own).
    head = as_job["head"]
    submitter = [c for c in head["spec"]["containers"] if c["name"] == SUBMITTER]
    assert len(submitter) == 1
    submit_line = " ".join(submitter[0]["command"] + submitter[0].get("args", []))
    assert "grpo_stack.zip --follow --address http://127.0.0.1:8265 --expect-spec-text-sha256" in submit_line
    head["spec"]["containers"] = [c for c in head["spec"]["containers"] if c["name"] != SUBMITTER]
    assert head["spec"].pop("restartPolicy") == "Never"
    as_cluster["head"]["spec"].pop("restartPolicy")
    assert head == as_cluster["head"]


def test_a_failed_run_ends_the_rayjob_and_deletes_its_cluster(control_plane, helm_bin):
    cp = control_plane
    with running_job(cp, helm_bin, "ends", "jobmode-ends") as release:
        cluster = job_status_in(cp, release, "the RayJob to run", "Running")["rayClusterName"]
        head = ray_pods(cp, release.namespace, cluster)["head"]["metadata"]["name"]
        # The in-pod submit exits 1 when training fails after its retries (grpo_stack.job.submit): so does the
        # submitter that streams it.
        cp.kubectl("-n", release.namespace, "annotate", "pod", head, f"{EXIT}=1")
        status = job_status_in(cp, release, "the operator to fail the RayJob", "Failed")
        assert SUBMITTER in status.get("message", "") or status.get("reason") in ("SubmissionFailed", "AppFailed")
        wait_for_freed(cp, release.namespace, cluster)


def test_a_succeeded_run_completes_the_rayjob_and_deletes_its_cluster(control_plane, helm_bin, dashboard_head):
    from ray.job_submission import JobStatus, JobSubmissionClient

    cp = control_plane
    with running_job(cp, helm_bin, "done", "jobmode-succeeds") as release:
        running = job_status_in(cp, release, "the RayJob to run", "Running")
        cluster, job_id = running["rayClusterName"], running["jobId"]
        assert running["dashboardURL"].startswith(f"{cluster}-head-svc.{release.namespace}.svc.cluster.local:")
        # The run: a Ray job under the RayJob's own job ID, as the submitter would have submitted it.
        ray = JobSubmissionClient(dashboard_head.address)
        ray.submit_job(entrypoint="echo trained", submission_id=job_id, entrypoint_num_cpus=0)
        wait_for("the Ray job to succeed", lambda: ray.get_job_status(job_id) == JobStatus.SUCCEEDED, timeout=120)
        cp.route_service(running["dashboardURL"], dashboard_head.address.removeprefix("http://"))
        head = ray_pods(cp, release.namespace, cluster)["head"]["metadata"]["name"]
        cp.kubectl("-n", release.namespace, "annotate", "pod", head, f"{EXIT}=0")
        final = job_status_in(cp, release, "the operator to end the RayJob", "Complete", "Failed")
        assert (final["jobDeploymentStatus"], final.get("jobStatus")) == ("Complete", "SUCCEEDED"), final
        wait_for_freed(cp, release.namespace, cluster)


def test_deadline_clock_survives_an_upgrade(control_plane, helm_bin):
    """global.job.deadline in job mode: the RayJob the real API server admits carries activeDeadlineSeconds and the
    render time both clocks count from. A plain `helm upgrade` of the running RayJob is refused: Helm 4 applies
    server-side and the operator has written fields of its spec (.spec.rayClusterSpec.workerGroupSpecs), so a
    job-mode run is changed by uninstall and install (docs/day-2.md). Forced, the upgrade finds the live RayJob
    (Helm's lookup against this API server) and keeps that render time, so the deadline does not move. Where it
    stops: KubeRay's timer itself, which fires hours later (rayjob_controller.go
    checkActiveDeadlineAndUpdateStatusIfNeeded)."""
    import calendar
    import time

    cp = control_plane
    end = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 3 * 3600))
    sets = [*JOB, f"global.job.deadline.end={end}", "global.job.verl.useV1Trainer=false",
            "global.job.trainer.saveFreq=5"]
    with running_job(cp, helm_bin, "dl", "jobmode-deadline", sets) as release:
        first = rayjob(cp, release)
        clock = int(first["metadata"]["annotations"]["grpo-stack.io/deadline-clock"])
        deadline = first["spec"]["activeDeadlineSeconds"]
        assert clock + deadline == calendar.timegm(time.strptime(end, "%Y-%m-%dT%H:%M:%SZ"))
        assert f"--started-at {clock}" in first["spec"]["entrypoint"]
        time.sleep(2)  # a new render would move both by at least this much
        with pytest.raises(HelmError, match='conflict with "kuberay-operator"'):
            release.upgrade("global.job.deadline.marginMinutes=5")
        release.upgrade(flags=("--force-conflicts",))
        after = rayjob(cp, release)
        assert after["metadata"]["generation"] > first["metadata"]["generation"], "the upgrade changed the RayJob"
        assert after["metadata"]["annotations"]["grpo-stack.io/deadline-clock"] == str(clock)
        assert after["spec"]["activeDeadlineSeconds"] == deadline
        assert f"--started-at {clock}" in after["spec"]["entrypoint"]
