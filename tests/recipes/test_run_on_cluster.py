"""recipes/grpo/run-on-cluster.sh end to end WITHOUT a Kubernetes cluster: `kubectl` is a recording shim on
PATH (tests/recipes/kubectl_shim.py) that answers from fixture state derived from the rendered chart and runs
`exec` commands locally; the job is then submitted to a REAL local Ray head (`ray start --head` on loopback),
whose driver runs a stand-in `verl.trainer.main_ppo` that records the arguments it received.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from grpo_stack.job import build
from grpo_stack.paths import REPO_ROOT
from grpo_stack.render import job_spec, render
from grpo_stack.values import load_values_file

RELEASE, NAMESPACE = "grpo", "team-a"
SCRIPT = REPO_ROOT / "recipes" / "grpo" / "run-on-cluster.sh"
VENV_BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def fake_verl(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("fake-verl")
    pkg = root / "verl" / "trainer"
    pkg.mkdir(parents=True)
    (root / "verl" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "main_ppo.py").write_text(
        "import json, sys\nprint('GRPO-ARGV ' + json.dumps(sys.argv[1:]), flush=True)\n"
    )
    return root


@pytest.fixture(scope="module")
def ray_head(fake_verl, tmp_path_factory):
    """A real Ray head on loopback; the stand-in verl is on its PYTHONPATH so the driver can import it."""
    port, dash = free_port(), free_port()
    env = {**os.environ, "PYTHONPATH": str(fake_verl), "RAY_USAGE_STATS_ENABLED": "0",
           "PATH": f"{VENV_BIN}:{os.environ['PATH']}"}
    temp = tmp_path_factory.mktemp("ray")
    subprocess.run([str(VENV_BIN / "ray"), "start", "--head", f"--port={port}", "--node-ip-address=127.0.0.1",
                    f"--dashboard-port={dash}", "--dashboard-host=127.0.0.1", "--num-cpus=2", "--num-gpus=0",
                    "--include-dashboard=true", "--disable-usage-stats", f"--temp-dir={temp}"],
                   env=env, check=True, capture_output=True, timeout=180)
    address = f"http://127.0.0.1:{dash}"
    deadline = time.time() + 60
    while time.time() < deadline:
        if subprocess.run([str(VENV_BIN / "ray"), "job", "list", "--address", address],
                          capture_output=True, env=env).returncode == 0:
            break
        time.sleep(1)
    yield address, env
    subprocess.run([str(VENV_BIN / "ray"), "stop", "--force"], env=env, capture_output=True, timeout=120)


def cluster_state(values: str, *, ready_workers=None, extra=()) -> tuple[dict, dict]:
    """Fixture state for the shim, derived from the chart render of a shipped values file."""
    rendered = render(load_values_file(REPO_ROOT / "values" / values).data, release=RELEASE, namespace=NAMESPACE)
    rc = rendered.of_kind("RayCluster")[0]
    replicas = [g["replicas"] for g in rc.obj["spec"]["workerGroupSpecs"]]
    labels = {"ray.io/cluster": rc.name}
    pods = [{"name": f"{rc.name}-head-x", "namespace": NAMESPACE, "ready": True,
             "labels": {**labels, "ray.io/node-type": "head"}}]
    for i in range(sum(replicas)):
        ready = True if ready_workers is None else i < ready_workers
        pods.append({"name": f"{rc.name}-gpu-worker-{i}", "namespace": NAMESPACE, "ready": ready,
                     "labels": {**labels, "ray.io/node-type": "worker"}})
    state = {"rayclusters": [{"name": rc.name, "namespace": NAMESPACE, "replicas": replicas,
                              "labels": rc.obj["metadata"]["labels"]}], "pods": pods}
    for other in extra:
        state["rayclusters"].append(other["cluster"])
        state["pods"].extend(other["pods"])
    return state, job_spec(rendered)


def run_recipe(tmp_path, state, spec, *args, env=None, namespace=NAMESPACE):
    shim_bin = tmp_path / "bin"
    shim_bin.mkdir(exist_ok=True)
    kubectl = shim_bin / "kubectl"
    kubectl.write_text(f"#!/bin/sh\nexec {sys.executable} {Path(__file__).with_name('kubectl_shim.py')} \"$@\"\n")
    kubectl.chmod(0o755)
    (tmp_path / "state.json").write_text(json.dumps(state))
    (tmp_path / "job.json").write_text(json.dumps(spec))
    run_env = {**(env or os.environ), "KUBECTL_SHIM_STATE": str(tmp_path / "state.json"),
               "KUBECTL_SHIM_LOG": str(tmp_path / "calls.log"), "KUBECTL_SHIM_ROOT": str(tmp_path / "pod"),
               "GRPO_JOB_SPEC": str(tmp_path / "job.json"),
               "PATH": f"{shim_bin}:{VENV_BIN}:{(env or os.environ)['PATH']}"}
    proc = subprocess.run(["bash", str(SCRIPT), "--release", RELEASE, "--namespace", namespace, *args],
                          env=run_env, capture_output=True, text=True, timeout=300)
    calls = [json.loads(line) for line in (tmp_path / "calls.log").read_text().splitlines()]
    return proc, calls


def wait_for_job(address: str, env: dict, timeout: float = 180) -> tuple[str, str]:
    from ray.job_submission import JobSubmissionClient

    client = JobSubmissionClient(address)
    deadline = time.time() + timeout
    while time.time() < deadline:
        jobs = client.list_jobs()
        if jobs and str(jobs[-1].status) in ("SUCCEEDED", "FAILED", "STOPPED"):
            job = jobs[-1]
            return str(job.status), client.get_job_logs(job.submission_id)
        time.sleep(1)
    raise AssertionError("the Ray job did not finish")


def test_submits_the_built_command_to_ray(tmp_path, ray_head):
    """The head pod receives the job from the one builder and Ray runs exactly that command, each key once."""
    address, env = ray_head
    state, spec = cluster_state("qwen3-8b.yaml")
    proc, calls = run_recipe(tmp_path, state, spec, env={**env, "RAY_ADDRESS": address})
    assert proc.returncode == 0, proc.stderr
    status, logs = wait_for_job(address, env)
    assert status == "SUCCEEDED", logs
    received = json.loads(logs.split("GRPO-ARGV ", 1)[1].splitlines()[0])
    expected = build(spec).argv()
    assert received == expected[3:]  # after python3 -m verl.trainer.main_ppo
    keys = [a.split("=", 1)[0] for a in received[1:]]
    assert len(keys) == len(set(keys)), "a Hydra key was emitted twice"
    exec_pods = {c[c.index("exec") + 1] for c in calls if "exec" in c}
    assert exec_pods == {"grpo-ray-head-x"}, "the job must be submitted from this release's head pod"


def test_wrong_namespace_finds_no_cluster(tmp_path):
    """A namespace typo must not fall back to `default` or to another head: it stops before any exec."""
    state, spec = cluster_state("qwen3-8b.yaml")
    proc, calls = run_recipe(tmp_path, state, spec, namespace="default")
    assert proc.returncode == 1
    assert "expected one RayCluster for release grpo in default, found 0" in proc.stderr
    assert not [c for c in calls if "exec" in c]


def test_picks_this_release_head_among_several_clusters(tmp_path):
    """Another release's Ray cluster in the same namespace is never the target (no `.items[0]`)."""
    other = {"cluster": {"name": "other-ray", "namespace": NAMESPACE, "replicas": [1],
                         "labels": {"app.kubernetes.io/instance": "other"}},
             "pods": [{"name": "other-ray-head-y", "namespace": NAMESPACE, "ready": True,
                       "labels": {"ray.io/cluster": "other-ray", "ray.io/node-type": "head"}}]}
    state, spec = cluster_state("qwen3-8b.yaml", extra=[other])
    state["rayclusters"].reverse()
    state["pods"].reverse()
    proc, calls = run_recipe(tmp_path, state, spec, "--dry-run")
    assert proc.returncode == 0, proc.stderr
    exec_pods = {c[c.index("exec") + 1] for c in calls if "exec" in c}
    assert exec_pods == {"grpo-ray-head-x"}


def test_pending_worker_stops_the_submission(tmp_path):
    """A Pending worker passed the predecessor's head-only precondition and the run never started."""
    state, spec = cluster_state("qwen3-30b.yaml", ready_workers=1)
    proc, calls = run_recipe(tmp_path, state, spec, "--wait-timeout", "1s")
    assert proc.returncode == 1
    assert "are not Ready" in proc.stderr
    assert not [c for c in calls if "exec" in c]


def test_dry_run_prints_the_command(tmp_path):
    state, spec = cluster_state("miles-qwen3-4b.yaml")
    proc, _ = run_recipe(tmp_path, state, spec, "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert "/root/miles/train.py" in proc.stdout and "--rm-url" in proc.stdout
    assert "source" in proc.stdout and "qwen3-4B.sh" in proc.stdout


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is required")
def test_script_refuses_missing_arguments(tmp_path):
    proc = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True)
    assert proc.returncode == 2 and "usage" in proc.stderr
