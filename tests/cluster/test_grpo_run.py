"""grpo-run against the REAL API server of the control-plane tier: a release installed with Helm on kwok nodes, its
RayCluster reconciled into pods by the real KubeRay operator (v1.5.0), the CLI run as a user runs it.

What is real: finding the release by the chart's labels, a missing release or namespace, an unreachable API
server, the RayCluster's and the pods' state, and raycluster.worker.scaleToZero: the operator deletes the GPU
workers (and keeps the head) after `helm upgrade`, and makes them again after the revert.
Where the check stops: kwok runs no container and serves no kubelet API here, so grpo-run's exec into the head pod
fails at the API server (`status` then says the run is not readable, and still shows the cluster). The in-pod half
runs instead as a local process over the release's own job.json (its ConfigMap) and a local directory as the run's
storage (tests/runctl/local.py), and against a real Ray head in tests/recipes/test_run_inpod.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from grpo_stack.localcluster.cluster import free_port
from grpo_stack.runctl import commands
from grpo_stack.runctl.kube import Kube
from grpo_stack.supervise import logstore, records

from tests.cluster.conftest import namespace_for
from tests.cluster.releases import REPO_ROOT, Release, prepare_namespace
from tests.runctl.local import LocalExecutor

GRPO_RUN = os.path.join(os.path.dirname(sys.executable), "grpo-run")
NAMESPACE = namespace_for("grpo-run")


@pytest.fixture(scope="module")
def release(node_pool, helm_bin):
    prepare_namespace(node_pool, NAMESPACE)
    rel = Release(node_pool, helm_bin, "grpo", NAMESPACE, [REPO_ROOT / "values" / "qwen3-8b.yaml"])
    try:
        rel.install()
        rel.wait_running()
        yield rel
    finally:
        rel.helm("uninstall", rel.name, "-n", NAMESPACE, "--ignore-not-found")
        node_pool.kubectl("delete", "namespace", NAMESPACE, "--wait=false", check=False)


def grpo_run(rel: Release, *args: str, kubeconfig: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([GRPO_RUN, *args, "--kubeconfig", kubeconfig or str(rel.cp.kubeconfig)],
                          capture_output=True, text=True, timeout=120)


def ray_pods(rel: Release, node_type: str) -> list[dict]:
    return rel.cp.get("-n", NAMESPACE, "pods", "-l", f"ray.io/cluster=grpo-ray,ray.io/node-type={node_type}")["items"]


def wait_until(what: str, check, timeout: float = 120):
    deadline = time.monotonic() + timeout
    while not (got := check()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(1)
    return got


def test_a_missing_release_or_namespace_is_exit_2(release):
    proc = grpo_run(release, "status", "nope", "-n", NAMESPACE)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (f"grpo-run: no release nope in namespace {NAMESPACE}: no RayCluster or RayJob "
                                   "labelled app.kubernetes.io/instance=nope (releases there: grpo)")
    proc = grpo_run(release, "logs", "grpo", "-n", "no-such-namespace")
    assert proc.returncode == 2 and "namespace no-such-namespace does not exist" in proc.stderr


def test_an_unreachable_cluster_is_exit_2(release, tmp_path):
    """The fixture's own credentials, a port nothing listens on."""
    port = free_port()
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(release.cp.kubeconfig.read_text().replace(release.cp.server, f"https://127.0.0.1:{port}"))
    proc = grpo_run(release, "list", "-n", NAMESPACE, kubeconfig=str(kubeconfig))
    assert proc.returncode == 2
    assert f"cannot reach the cluster at https://127.0.0.1:{port}" in proc.stderr


def test_list_and_status_from_the_api_server(release):
    proc = grpo_run(release, "list", "-n", NAMESPACE)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["grpo\tcluster\tready, 1 of 1 workers Ready"]  # the operator's status
    proc = grpo_run(release, "status", "grpo", "-n", NAMESPACE)
    assert proc.returncode == 0, proc.stderr
    shown = dict(line.split(":", 1) for line in proc.stdout.splitlines())
    assert shown["cluster"].strip() == "RayCluster grpo-ray: head Ready, 1 of 1 workers Ready"
    head = ray_pods(release, "head")[0]["metadata"]["name"]
    assert shown["run"].strip().startswith(f"not readable: exec into {NAMESPACE}/{head}")  # kwok: no kubelet API


def test_status_reads_the_runs_attempts_through_the_in_pod_half(release, tmp_path):
    """The release's real objects and its own job.json; the attempts file the supervisor leaves on the storage."""
    cm = release.cp.get("-n", NAMESPACE, "configmaps", "-l",
                        "app.kubernetes.io/instance=grpo,app.kubernetes.io/component=job")["items"][0]
    spec = json.loads(cm["data"]["job.json"])
    ckpt = tmp_path / "fsx" / spec["job"]["trainer"]["checkpointDir"]
    records.append(ckpt, records.Attempt(attempt=1, started=0.0, ended=1.0, start_step=0, last_step=4,
                                         checkpoint=4, end="finished: step 4 of 4", job_id="grpo-verl-x"))
    stored = logstore.log_path(ckpt, "grpo-verl-x")
    stored.parent.mkdir(parents=True)
    stored.write_text("step:4 - actor/pg_loss:0.1\n")
    kube = Kube(str(release.cp.kubeconfig), None)
    executor = LocalExecutor(spec, tmp_path / "fsx", tmp_path / "pod")
    assert commands.list_runs(kube, NAMESPACE, "grpo", executor=executor)[0] == (
        "grpo-verl-x\tstored log only (the head no longer knows it)")
    shown = dict(line.split(":", 1) for line in commands.status(kube, NAMESPACE, "grpo", executor=executor))
    assert shown["cluster"].strip() == "RayCluster grpo-ray: head Ready, 1 of 1 workers Ready"
    assert shown["phase"].strip() == "finished"
    assert shown["last ended"].strip() == "attempt 1: finished: step 4 of 4"
    assert shown["storage"].strip() == str(ckpt)


def test_scale_to_zero_frees_the_gpus_and_reverting_brings_them_back(release):
    """`helm upgrade` with raycluster.worker.scaleToZero: the operator deletes every GPU worker and keeps the head
    (the same pod); false again and the workers are back, Ready. No uninstall."""
    head = ray_pods(release, "head")[0]["metadata"]["uid"]
    assert len(ray_pods(release, "worker")) == 1
    release.upgrade("raycluster.worker.scaleToZero=true")
    wait_until("no worker pods", lambda: not ray_pods(release, "worker"))
    assert [p["metadata"]["uid"] for p in ray_pods(release, "head")] == [head]
    proc = grpo_run(release, "status", "grpo", "-n", NAMESPACE)
    assert "head Ready, workers scaled to zero (GPUs freed)" in proc.stdout, proc.stdout + proc.stderr
    release.upgrade("raycluster.worker.scaleToZero=false")
    release.wait_running()
    assert len(ray_pods(release, "worker")) == 1
    proc = grpo_run(release, "status", "grpo", "-n", NAMESPACE)
    assert "head Ready, 1 of 1 workers Ready" in proc.stdout, proc.stdout + proc.stderr


def test_a_job_mode_release_is_found_by_its_rayjob(release):
    """Job mode plugs in through the RayJob (named after the release, labelled with it): created suspended here
    (the operator then makes no cluster), the operator's own jobDeploymentStatus is what `status` shows."""
    spec = release.cp.get("-n", NAMESPACE, "rayclusters.ray.io", "grpo-ray")["spec"]
    job = {"apiVersion": "ray.io/v1", "kind": "RayJob",
           "metadata": {"name": "jobrun", "namespace": NAMESPACE, "labels": {"app.kubernetes.io/instance": "jobrun"}},
           "spec": {"suspend": True, "shutdownAfterJobFinishes": True, "entrypoint": "true", "rayClusterSpec": spec}}
    release.cp.apply([job])
    try:
        wait_until("the operator to suspend the RayJob", lambda: release.cp.get(
            "-n", NAMESPACE, "rayjobs.ray.io", "jobrun").get("status", {}).get("jobDeploymentStatus") == "Suspended")
        proc = grpo_run(release, "status", "jobrun", "-n", NAMESPACE)
        assert proc.returncode == 0, proc.stderr
        shown = {k: v.strip() for k, v in (line.split(":", 1) for line in proc.stdout.splitlines())}
        assert shown["release"] == f"jobrun in {NAMESPACE}, job mode"
        assert shown["job"] == "RayJob jobrun: deployment Suspended, job not submitted"
        assert shown["run"] == "not readable: release jobrun has no Ray head pod now (its RayJob has no RayCluster)"
        proc = grpo_run(release, "list", "-n", NAMESPACE)
        assert "jobrun\tjob\tRayJob jobrun: deployment Suspended, job not submitted" in proc.stdout.splitlines()
    finally:
        release.cp.kubectl("-n", NAMESPACE, "delete", "rayjobs.ray.io", "jobrun", "--wait=false", check=False)
