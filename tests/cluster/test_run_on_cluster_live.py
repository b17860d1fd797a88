"""recipes/grpo/run-on-cluster.sh against the real API server: two releases in one namespace (one installed with
Helm 4.1.4, one with Helm 3.17.3), the operator's real Ray pods, real Deployments and their conditions.

Every kubectl call of the script goes to this API server except `kubectl exec` and `kubectl cp`: kwok runs no
container, so those two stay on the recording shim (tests/recipes/kubectl_shim.py), which copies the builder and
runs the in-pod submit locally against the job.json the pod would have mounted. The submit itself, against a real
Ray head, is tested in tests/recipes/test_run_on_cluster.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from contextlib import contextmanager

import pytest

from tests.cluster.conftest import namespace_for
from tests.cluster.releases import REPO_ROOT, Release, prepare_namespace

SCRIPT = REPO_ROOT / "recipes" / "grpo" / "run-on-cluster.sh"
SHIM = REPO_ROOT / "tests" / "recipes" / "kubectl_shim.py"
VENV_BIN = os.path.dirname(sys.executable)
NAMESPACE = namespace_for("submit")
OURS = ("grpo", "qwen3-235b")  # Ray cluster, reward service and sandbox
THEIRS = ("other", "qwen3-8b")  # a second release in the same namespace


@pytest.fixture(scope="module")
def two_releases(node_pool, helm_bin, helm3_bin):
    prepare_namespace(node_pool, NAMESPACE)
    ours = Release(node_pool, helm_bin, OURS[0], NAMESPACE, [REPO_ROOT / "values" / f"{OURS[1]}.yaml"])
    theirs = Release(node_pool, helm3_bin, THEIRS[0], NAMESPACE, [REPO_ROOT / "values" / f"{THEIRS[1]}.yaml"])
    try:
        for rel in (ours, theirs):
            rel.install()
        for rel in (ours, theirs):
            rel.wait_running()
        yield ours, theirs
    finally:
        for rel in (ours, theirs):
            rel.helm("uninstall", rel.name, "-n", NAMESPACE, "--ignore-not-found")
        node_pool.kubectl("delete", "namespace", NAMESPACE, "--wait=false", check=False)


def job_configmap_text(rel: Release) -> str:
    cms = rel.cp.get("-n", NAMESPACE, "configmaps", "-l",
                     f"app.kubernetes.io/instance={rel.name},app.kubernetes.io/component=job")["items"]
    assert len(cms) == 1
    return cms[0]["data"]["job.json"]


def head_pod(rel: Release) -> str:
    cluster = rel.cp.get("-n", NAMESPACE, "rayclusters.ray.io", "-l", f"app.kubernetes.io/instance={rel.name}")[
        "items"][0]["metadata"]["name"]
    pods = rel.cp.get("-n", NAMESPACE, "pods", "-l", f"ray.io/cluster={cluster},ray.io/node-type=head")["items"]
    return pods[0]["metadata"]["name"]


def run_script(rel: Release, tmp_path, *args: str, mounted: str | None = None):
    """run-on-cluster.sh with `kubectl` = the real kubectl on this API server, exec/cp to the shim."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    kubectl = bin_dir / "kubectl"
    # The script calls `kubectl --namespace NS VERB ...`: the third argument is the verb.
    kubectl.write_text(
        "#!/bin/sh\n"
        f'case "$3" in exec|cp) exec {sys.executable} {SHIM} "$@" ;; esac\n'
        f'exec {rel.cp.kubectl_bin} --kubeconfig={rel.cp.kubeconfig} "$@"\n')
    kubectl.chmod(0o755)
    state = {"rayclusters": [], "pods": [{"name": head_pod(rel), "namespace": NAMESPACE, "labels": {}}]}
    (tmp_path / "state.json").write_text(json.dumps(state))
    (tmp_path / "job.json").write_text(job_configmap_text(rel) if mounted is None else mounted)
    (tmp_path / "calls.log").write_text("")
    env = {**os.environ, "KUBECTL_SHIM_STATE": str(tmp_path / "state.json"),
           "KUBECTL_SHIM_LOG": str(tmp_path / "calls.log"), "KUBECTL_SHIM_ROOT": str(tmp_path / "pod"),
           "GRPO_JOB_SPEC": str(tmp_path / "job.json"), "PATH": f"{bin_dir}:{VENV_BIN}:{os.environ['PATH']}"}
    proc = subprocess.run(["bash", str(SCRIPT), "--release", rel.name, "--namespace", NAMESPACE, *args], env=env,
                          capture_output=True, text=True, timeout=300)
    shim_calls = [json.loads(line) for line in (tmp_path / "calls.log").read_text().splitlines()]
    return proc, shim_calls


@contextmanager
def unschedulable(cp, instance_type: str, pods: list[str]):
    """Cordon every node of `instance_type` and delete `pods`: their replacements stay Pending."""
    nodes = [n["metadata"]["name"] for n in cp.get("nodes", "-l", f"node.kubernetes.io/instance-type={instance_type}")[
        "items"]]
    cp.kubectl("cordon", *nodes)
    try:
        cp.kubectl("-n", NAMESPACE, "delete", "pods", *pods, "--wait=true", "--timeout=60s")
        yield
    finally:
        cp.kubectl("uncordon", *nodes)


def _wait_for_pending(cp, selector: str, timeout: float = 60) -> None:
    """Until the controllers have made the replacement pods, which the scheduler leaves Pending."""
    deadline = time.monotonic() + timeout
    while not any(p["status"].get("phase") == "Pending"
                  for p in cp.get("-n", NAMESPACE, "pods", "-l", selector)["items"]):
        assert time.monotonic() < deadline, f"no Pending replacement for {selector}"
        time.sleep(0.5)


def test_each_release_finds_its_own_cluster_among_two(two_releases, tmp_path):
    """With two releases in one namespace, each run finds its own RayCluster (by app.kubernetes.io/instance),
    counts its own workers and submits from its own head pod."""
    for rel in two_releases:
        proc, shim_calls = run_script(rel, tmp_path / rel.name, "--dry-run")
        assert proc.returncode == 0, proc.stderr
        workers = rel.computed_values()["global"]["cluster"]["nodes"]
        assert f"submitting from {NAMESPACE}/{head_pod(rel)} ({workers} workers Ready)" in proc.stdout
        execs = [c for c in shim_calls if "exec" in c]
        assert execs and all(head_pod(rel) in c for c in execs)


def test_waits_for_every_worker(two_releases, tmp_path):
    """A worker the scheduler cannot place (its node group cordoned) stops the submission after --wait-timeout;
    once it is placed, the same command goes through. Nothing is exec'd while a worker is not Ready."""
    ours, _ = two_releases
    gpu_type = ours.computed_values()["global"]["cluster"]["gpuInstanceType"]
    cluster = ours.cp.get("-n", NAMESPACE, "rayclusters.ray.io", "-l", "app.kubernetes.io/instance=grpo")[
        "items"][0]["metadata"]["name"]
    one_worker = ours.cp.get("-n", NAMESPACE, "pods", "-l", f"ray.io/cluster={cluster},ray.io/node-type=worker")[
        "items"][0]["metadata"]["name"]
    with unschedulable(ours.cp, gpu_type, [one_worker]):
        _wait_for_pending(ours.cp, f"ray.io/cluster={cluster},ray.io/node-type=worker")
        proc, shim_calls = run_script(ours, tmp_path / "pending", "--dry-run", "--wait-timeout", "5s")
        assert proc.returncode == 2, proc.stdout
        assert "are not Ready after 5s" in proc.stderr
        assert not shim_calls
    ours.wait_running()
    proc, _ = run_script(ours, tmp_path / "placed", "--dry-run")
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("component", ["reward-service", "sandbox-fusion"])
def test_waits_for_reward_and_sandbox_deployments(two_releases, tmp_path, component):
    """The reward service's and the sandbox's Deployments must be Available (the Deployment controller's own
    condition) before anything is submitted: with their pods unschedulable the script stops after
    --wait-timeout, naming the component."""
    ours, _ = two_releases
    instance_type = ours.computed_values()[component]["instanceType"]
    selector = f"app.kubernetes.io/instance=grpo,app.kubernetes.io/component={component}"
    pods = [p["metadata"]["name"] for p in ours.cp.get("-n", NAMESPACE, "pods", "-l", selector)["items"]]
    with unschedulable(ours.cp, instance_type, pods):
        _wait_for_pending(ours.cp, selector)
        ours.cp.kubectl("-n", NAMESPACE, "wait", "--for=condition=Available=False", "deployment", "-l", selector,
                        "--timeout=60s")
        proc, shim_calls = run_script(ours, tmp_path / component, "--dry-run", "--wait-timeout", "5s")
        assert proc.returncode == 2, proc.stdout
        assert f"{component} of release grpo is not Available after 5s" in proc.stderr
        assert not shim_calls
    ours.wait_running()


def test_refuses_a_stale_job_spec(two_releases, tmp_path):
    """After `helm upgrade` changes only the job (saveFreq), the API server holds the new job ConfigMap while a
    pod's mount may still hold the old one: the script hashes what the API server holds and the in-pod submit
    refuses the old mount (exit 2); with the current spec mounted it goes through."""
    _, theirs = two_releases
    old = job_configmap_text(theirs)
    theirs.upgrade("global.job.trainer.saveFreq=7")
    assert job_configmap_text(theirs) != old
    proc, _ = run_script(theirs, tmp_path / "stale", "--dry-run", mounted=old)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "is not the one the release holds now" in proc.stderr
    proc, _ = run_script(theirs, tmp_path / "current", "--dry-run")
    assert proc.returncode == 0, proc.stderr


def test_stage_first_install_requests_no_gpu_until_upgraded(two_releases, tmp_path):
    """docs/day-2.md, Stage first: installed with raycluster.worker.scaleToZero, the release runs its head and the
    fsx-utils pod (where the model and data are staged) and no pod asks for a GPU, so no GPU node is requested;
    `run-on-cluster.sh --dry-run` checks the run from the head, while the real submission is refused. Upgraded
    with the workers on, the same dry run waits for them."""
    cp = two_releases[0].cp
    stage = Release(cp, two_releases[0].helm_bin, "stage", NAMESPACE, [REPO_ROOT / "values" / "qwen3-8b.yaml"],
                    sets=["raycluster.worker.scaleToZero=true"])
    try:
        stage.install()
        pods = stage.wait_running()
        gpus = [p["metadata"]["name"] for p in pods for c in p["spec"]["containers"]
                if "nvidia.com/gpu" in ((c.get("resources") or {}).get("requests") or {})]
        assert gpus == [] and {p["metadata"]["labels"].get("app.kubernetes.io/component") for p in pods} >= {
            "fsx-utils"}
        proc, shim_calls = run_script(stage, tmp_path / "staged", "--dry-run")
        assert proc.returncode == 0, proc.stderr
        assert "no GPU workers: raycluster.worker.scaleToZero; a dry run needs none" in proc.stdout
        assert "dry run, nothing submitted" in proc.stdout
        proc, _ = run_script(stage, tmp_path / "refused")
        assert proc.returncode == 2 and "scaled to zero" in proc.stderr
        stage.upgrade("raycluster.worker.scaleToZero=false")
        stage.wait_running()
        proc, _ = run_script(stage, tmp_path / "workers", "--dry-run")
        assert proc.returncode == 0, proc.stderr
        assert "(1 workers Ready)" in proc.stdout
    finally:
        stage.helm("uninstall", stage.name, "-n", NAMESPACE, "--ignore-not-found")
