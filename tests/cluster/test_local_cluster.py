"""`grpo-cluster up / status / down` as a user runs it (the installed console script), then the README's install on
the cluster it starts: `helm install`, `helm test` and `grpo-lint --cluster` against it.

Where the check stops: kwok runs no containers, so the release's pods are scheduled and reported Running (and the
`helm test` pods Succeeded) without any process inside them; what is proved is admission by the real API server,
placement by the real scheduler on nodes shaped like the values' instance types, and reconciliation by the real
KubeRay operator. The KubeRay operator runs as a local process; `grpo-lint --cluster` finds it by its leader
lease, as it finds any operator whose Deployment it cannot see.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from grpo_stack.catalog.instances import lookup
from grpo_stack.localcluster import binaries
from grpo_stack.localcluster.nodes import EFA_RESOURCE, GPU_RESOURCE, GPU_TAINT, INSTANCE_TYPE_LABEL

from tests.conftest import REPO_ROOT

VALUES = REPO_ROOT / "values" / "qwen3-8b.yaml"
NS = "grpo"
BIN = Path(sys.executable).parent


def cli(*args: str, env: dict[str, str], timeout: float = 700) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(BIN / "grpo-cluster"), *args], capture_output=True, text=True, env=env,
                          timeout=timeout, check=False)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def pid_alive(pid: int) -> bool:
    from grpo_stack.localcluster.session import alive

    return alive(pid)


@pytest.fixture(scope="module")
def env(kubectl_bin):
    if not binaries.verified():
        reason = f"the control-plane binaries are not built at {binaries.tools_dir()}: run `make cluster-tools`"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return {**os.environ, "GRPO_KUBECTL": str(kubectl_bin)}


@pytest.fixture(scope="module")
def cluster(env, tmp_path_factory):
    """One `grpo-cluster up` for the module; `down` at the end whatever happened."""
    state_dir = tmp_path_factory.mktemp("local-cluster")
    started = time.monotonic()
    proc = cli("up", str(VALUES), "--namespace", NS, "--dir", str(state_dir), env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    exports = [line for line in proc.stdout.splitlines() if line.startswith("export KUBECONFIG=")]
    assert len(exports) == 1, proc.stdout
    kubeconfig = exports[0].split("=", 1)[1]
    print(f"grpo-cluster up: {time.monotonic() - started:.0f}s (binaries built)")
    try:
        yield state_dir, {**env, "KUBECONFIG": kubeconfig}
    finally:
        cli("down", "--dir", str(state_dir), env=env)


def kubectl(kubectl_bin, env, *args: str) -> dict:
    out = subprocess.run([str(kubectl_bin), *args, "-o", "json"], capture_output=True, text=True, env=env,
                         timeout=120, check=True).stdout
    return json.loads(out)


def test_nodes_are_shaped_like_the_values_instance_types(cluster, kubectl_bin):
    _, env = cluster
    values = yaml.safe_load(VALUES.read_text())["global"]["cluster"]
    gpu_type = values["gpuInstanceType"]
    row = lookup(gpu_type)
    nodes = kubectl(kubectl_bin, env, "get", "nodes")["items"]
    gpu_nodes = [n for n in nodes if n["metadata"]["labels"][INSTANCE_TYPE_LABEL] == gpu_type]
    assert len(gpu_nodes) == values["nodes"], [n["metadata"]["name"] for n in nodes]
    for node in gpu_nodes:
        assert node["status"]["allocatable"][GPU_RESOURCE] == str(row.gpus)
        assert node["status"]["allocatable"][EFA_RESOURCE] == str(row.efa)
        assert GPU_TAINT in node["spec"]["taints"]
    assert all(any(c["type"] == "Ready" and c["status"] == "True" for c in n["status"]["conditions"]) for n in nodes)


def test_namespace_holds_the_token_secret_and_a_bound_claim(cluster, kubectl_bin):
    _, env = cluster
    defaults = yaml.safe_load((REPO_ROOT / "charts" / "grpo-stack" / "values.yaml").read_text())["global"]
    secret = kubectl(kubectl_bin, env, "-n", NS, "get", "secret", defaults["secrets"]["hfToken"]["name"])
    assert defaults["secrets"]["hfToken"]["key"] in secret["data"]
    claim = kubectl(kubectl_bin, env, "-n", NS, "get", "pvc", defaults["storage"]["claimName"])
    assert claim["status"]["phase"] == "Bound" and claim["spec"]["accessModes"] == ["ReadWriteMany"]


def test_the_readme_install_runs_on_it(cluster, helm_bin, kubectl_bin, tmp_path):
    """helm install, every pod of the release placed and Running (kwok), helm test, grpo-lint --cluster: exit 0."""
    _, env = cluster
    env = {**env, "HELM_CACHE_HOME": str(tmp_path / "c"), "HELM_CONFIG_HOME": str(tmp_path / "f"),
           "HELM_DATA_HOME": str(tmp_path / "d")}
    chart = str(REPO_ROOT / "charts" / "grpo-stack")
    install = subprocess.run([str(helm_bin), "install", "grpo", chart, "-f", str(VALUES), "-n", NS, "--wait",
                              "--timeout", "5m"], capture_output=True, text=True, env=env, timeout=400, check=False)
    assert install.returncode == 0, install.stderr
    deadline = time.monotonic() + 180
    while True:
        pods = kubectl(kubectl_bin, env, "-n", NS, "get", "pods")["items"]
        ray = [p for p in pods if "ray.io/cluster" in p["metadata"].get("labels", {})]
        if ray and all(p["status"].get("phase") == "Running" for p in pods):
            break
        assert time.monotonic() < deadline, [(p["metadata"]["name"], p["status"].get("phase")) for p in pods]
        time.sleep(2)
    test = subprocess.run([str(helm_bin), "test", "grpo", "-n", NS, "--timeout", "3m"], capture_output=True,
                          text=True, env=env, timeout=300, check=False)
    assert test.returncode == 0, test.stdout + test.stderr
    lint = subprocess.run([str(BIN / "grpo-lint"), "--cluster", "--kubeconfig", env["KUBECONFIG"], "--namespace", NS,
                           str(VALUES)], capture_output=True, text=True, env=env, timeout=300, check=False)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    assert "no KubeRay operator found" not in lint.stdout + lint.stderr


def test_a_second_up_is_refused_and_status_lists_the_components(cluster, env):
    state_dir, _ = cluster
    again = cli("up", str(VALUES), "--dir", str(state_dir), env=env)
    assert again.returncode == 2 and "already up" in again.stderr, again.stderr
    status = cli("status", "--dir", str(state_dir), env=env)
    assert status.returncode == 0, status.stdout
    for name in ("etcd", "kube-apiserver", "kube-scheduler", "kube-controller-manager", "kwok", "service-proxy",
                 "kuberay-operator"):
        assert f"{name} " in status.stdout and "EXITED" not in status.stdout, status.stdout


def test_bad_values_are_refused_before_anything_starts(env, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("global:\n  cluster:\n    nodes: many\n")
    proc = cli("up", str(bad), "--dir", str(tmp_path / "state"), env=env)
    assert proc.returncode == 2 and str(bad) in proc.stderr, proc.stderr
    assert not (tmp_path / "state").exists()


def test_down_stops_every_process_it_started(env, tmp_path_factory):
    """A cluster of its own, so the module's shared one is never taken down under the other tests."""
    state_dir = tmp_path_factory.mktemp("local-cluster-down")
    assert cli("up", str(VALUES), "--dir", str(state_dir), env=env).returncode == 0
    state = json.loads((state_dir / "state.json").read_text())
    pids = [state["pid"], *state["components"].values()]
    assert all(pid_alive(p) for p in pids)
    down = cli("down", "--dir", str(state_dir), env=env)
    assert down.returncode == 0 and "stopped" in down.stdout, down.stdout
    assert not any(pid_alive(p) for p in pids), [p for p in pids if pid_alive(p)]
    assert cli("status", "--dir", str(state_dir), env=env).returncode == 1
    assert cli("down", "--dir", str(state_dir), env=env).returncode == 0  # idempotent
