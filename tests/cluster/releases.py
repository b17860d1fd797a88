"""A Helm release on the test control plane: install, upgrade, uninstall with the real Helm CLI, and read back."""

from __future__ import annotations

import json
import subprocess
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grpo_stack.localcluster.binaries import versions
from grpo_stack.localcluster.nodes import INSTANCE_TYPE_LABEL
from grpo_stack.localcluster.prerequisites import install_prerequisites

from tests.cluster.workloads import load_manifests, pod_templates, pods_per_instance_type

REPO_ROOT = Path(__file__).resolve().parents[2]
CHART = REPO_ROOT / "charts" / "grpo-stack"
INSTANCE_LABEL = "app.kubernetes.io/instance"
KUBE_VERSION = versions()["kubernetes"]  # the fixture's API server: the version its go.mod pins


class HelmError(AssertionError):
    pass


def helm(helm_bin: Path, env: dict[str, str], *args: str, timeout: float = 300) -> str:
    proc = subprocess.run([str(helm_bin), *args], env=env, capture_output=True, text=True, timeout=timeout,
                          check=False)
    if proc.returncode != 0:
        raise HelmError(f"helm {' '.join(args)} exited {proc.returncode}:\n{proc.stderr[-4000:]}")
    return proc.stdout


def prepare_namespace(cp, namespace: str) -> None:
    """The namespace a user prepares (README): Pod Security labels, the `hf-token` Secret, the FSx PVC (Bound).

    Admission enforces `privileged` here and warns/audits at `restricted`: which level each pod actually meets is
    asked of the API server pod by pod in tests/cluster/test_pod_security.py."""
    cp.create_namespace(namespace, enforce="privileged", warn="restricted")
    install_prerequisites(cp, namespace)


@dataclass
class Release:
    cp: Any
    helm_bin: Path
    name: str
    namespace: str
    values: list[Path]
    sets: list[str] = field(default_factory=list)

    def _env(self) -> dict[str, str]:
        return {**self.cp.env(), "HELM_CACHE_HOME": str(self.cp.workdir / "helm" / "cache"),
                "HELM_CONFIG_HOME": str(self.cp.workdir / "helm" / "config"),
                "HELM_DATA_HOME": str(self.cp.workdir / "helm" / "data")}

    def helm(self, *args: str, timeout: float = 300) -> str:
        return helm(self.helm_bin, self._env(), *args, timeout=timeout)

    def _value_args(self, extra_sets: tuple[str, ...] = ()) -> list[str]:
        args = []
        for path in self.values:
            args += ["-f", str(path)]
        for item in (*self.sets, *extra_sets):
            args += ["--set", item]
        return args

    def template(self, *sets: str) -> list[dict[str, Any]]:
        """What Helm would install (`helm template`, same chart, values and names)."""
        # --kube-version: without it Helm templates for its own default (v1.32.0 in Helm 3.17.3), which the chart's
        # kubeVersion (>=1.33) refuses; the release is installed on the fixture's v1.34.
        return load_manifests(self.helm("template", self.name, str(CHART), "-n", self.namespace,
                                        "--kube-version", KUBE_VERSION, *self._value_args(sets)))

    def provision_nodes(self, objects: list[dict[str, Any]] | None = None, spare: int = 1) -> None:
        """New kwok nodes for the release's pods that are not running yet, one node per pod (an upper bound) and a
        spare per instance type, so the scheduler, not the node count, decides where each pod goes."""
        running: Counter = Counter()
        nodes = {n["metadata"]["name"]: n["metadata"]["labels"].get(INSTANCE_TYPE_LABEL)
                 for n in self.cp.get("nodes")["items"]}
        for pod in self.pods():
            if pod["spec"].get("nodeName"):
                running[nodes.get(pod["spec"]["nodeName"])] += 1
        for instance_type, pods in pods_per_instance_type(objects or self.template()).items():
            missing = pods - running[instance_type]
            if missing > 0:
                self.cp.create_nodes(instance_type, missing + spare)

    def install(self, *extra: str) -> str:
        self.provision_nodes()
        return self.helm("install", self.name, str(CHART), "-n", self.namespace, *self._value_args(), *extra)

    def upgrade(self, *sets: str, flags: tuple[str, ...] = ()) -> str:
        self.sets = [*self.sets, *sets]
        self.provision_nodes()
        return self.helm("upgrade", self.name, str(CHART), "-n", self.namespace, *self._value_args(), *flags)

    def uninstall(self) -> str:
        return self.helm("uninstall", self.name, "-n", self.namespace, "--wait", "--timeout", "120s")

    def manifest(self) -> list[dict[str, Any]]:
        return load_manifests(self.helm("get", "manifest", self.name, "-n", self.namespace))

    def computed_values(self) -> dict[str, Any]:
        return json.loads(self.helm("get", "values", self.name, "-n", self.namespace, "--all", "-o", "json"))

    def notes(self) -> str:
        return self.helm("get", "notes", self.name, "-n", self.namespace)

    def expected_pods(self) -> int:
        return sum(replicas for obj in self.manifest() for _, replicas, _ in pod_templates(obj))

    def pods(self) -> list[dict[str, Any]]:
        """Live pods of this release: labelled with its instance, or made by its RayCluster."""
        items = self.cp.get("-n", self.namespace, "pods")["items"]
        try:
            clusters = {o["metadata"]["name"] for o in self.manifest() if o.get("kind") == "RayCluster"}
        except HelmError:  # not installed (yet)
            clusters = set()
        return [p for p in items if (p["metadata"].get("labels") or {}).get(INSTANCE_LABEL) == self.name
                or (p["metadata"].get("labels") or {}).get("ray.io/cluster") in clusters]

    def wait_running(self, timeout: float = 180) -> list[dict[str, Any]]:
        """Every pod the release makes exists and is Ready (Running) or, for Jobs, Succeeded; returns them.
        Fails with each pod's phase and the scheduler's events when that does not happen in `timeout`."""
        want = self.expected_pods()
        deadline = time.monotonic() + timeout
        while True:
            pods = self.pods()
            settled = [p for p in pods if _settled(p)]
            if len(pods) >= want and len(settled) == len(pods):
                return pods
            if time.monotonic() > deadline:
                events = self.cp.kubectl("-n", self.namespace, "get", "events", "--sort-by=.lastTimestamp",
                                         check=False).stdout[-4000:]
                raise AssertionError(
                    f"release {self.name}: {len(settled)}/{want} pods settled after {timeout:.0f}s: "
                    f"{[(p['metadata']['name'], p['status'].get('phase')) for p in pods]}\n{events}")
            time.sleep(1)


def _settled(pod: dict[str, Any]) -> bool:
    status = pod.get("status") or {}
    if status.get("phase") == "Succeeded":
        return True
    ready = [c for c in status.get("conditions") or [] if c["type"] == "Ready"]
    return status.get("phase") == "Running" and bool(ready) and ready[0]["status"] == "True"
