"""A release's Ray cluster, found by the labels the chart sets (never "the first head pod" of a namespace).

Cluster mode: the RayCluster labelled `app.kubernetes.io/instance=<release>` and its head pod
(`ray.io/cluster=<name>,ray.io/node-type=head`). Job mode: the RayJob of the release (same label), whose
status names the RayCluster it made (`status.rayClusterName`) and carries the job's own state.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import Refused
from .kube import Kube

INSTANCE = "app.kubernetes.io/instance"
# Where run-on-cluster.sh puts the grpo_stack package in the head pod (its `kubectl cp`): the in-pod half of
# grpo-run is imported from there.
IN_POD_TOOLS = "/tmp/grpo-stack"


@dataclass(frozen=True)
class Target:
    release: str
    namespace: str
    mode: str  # cluster | job
    raycluster: dict[str, Any] | None  # None: a RayJob whose cluster is not (or no longer) there
    rayjob: dict[str, Any] | None
    head: dict[str, Any] | None  # the head pod; None while there is none (suspended, scaled away, starting)
    workers: list[dict[str, Any]]

    @property
    def cluster_name(self) -> str | None:
        return (self.raycluster or {}).get("metadata", {}).get("name")

    def executor(self, kube: Kube):
        if self.head is None:
            raise Refused(f"release {self.release} has no Ray head pod now ({head_absence(self)})")
        containers = self.head["spec"]["containers"]
        # KubeRay's Ray container is the pod's first (its RayContainerIndex).
        return kube.executor(self.namespace, self.head["metadata"]["name"], containers[0]["name"], IN_POD_TOOLS)


def head_absence(target: Target) -> str:
    if target.raycluster is None:
        return "its RayJob has no RayCluster"
    if (target.raycluster.get("spec") or {}).get("suspend"):
        return f"RayCluster {target.cluster_name} is suspended"
    return f"RayCluster {target.cluster_name} has not made it yet"


def find(kube: Kube, namespace: str, release: str) -> Target:
    if not kube.namespace_exists(namespace):
        raise Refused(f"namespace {namespace} does not exist")
    selector = f"{INSTANCE}={release}"
    # Job mode's RayJob is named after the release; found by its label, or by that name where it lacks the label.
    jobs = kube.list_ray("rayjobs", namespace, selector) or [
        j for j in kube.list_ray("rayjobs", namespace) if j["metadata"]["name"] == release]
    clusters = kube.list_ray("rayclusters", namespace, selector)
    if len(jobs) > 1:
        raise Refused(f"release {release} in {namespace} has {len(jobs)} RayJobs: {_names(jobs)}")
    rayjob = jobs[0] if jobs else None
    if rayjob is not None:
        name = (rayjob.get("status") or {}).get("rayClusterName")
        clusters = [c for c in kube.list_ray("rayclusters", namespace) if c["metadata"]["name"] == name]
    elif not clusters:
        found = sorted({(o["metadata"].get("labels") or {}).get(INSTANCE) for o in
                        kube.list_ray("rayclusters", namespace) + kube.list_ray("rayjobs", namespace)} - {None})
        raise Refused(f"no release {release} in namespace {namespace}: no RayCluster or RayJob labelled {selector} "
                      f"(releases there: {', '.join(found) or 'none'})")
    if len(clusters) > 1:
        raise Refused(f"release {release} in {namespace} has {len(clusters)} RayClusters: {_names(clusters)}")
    raycluster = clusters[0] if clusters else None
    head, workers = None, []
    if raycluster is not None:
        cluster = raycluster["metadata"]["name"]
        heads = kube.pods(namespace, f"ray.io/cluster={cluster},ray.io/node-type=head")
        live = [p for p in heads if not p["metadata"].get("deletionTimestamp")]
        head = live[0] if len(live) == 1 else None
        workers = kube.pods(namespace, f"ray.io/cluster={cluster},ray.io/node-type=worker")
    return Target(release, namespace, "job" if rayjob is not None else "cluster", raycluster, rayjob, head, workers)


def releases(kube: Kube, namespace: str) -> list[dict[str, Any]]:
    """Every release in the namespace with a RayCluster or a RayJob: name, mode, cluster, state, workers."""
    if not kube.namespace_exists(namespace):
        raise Refused(f"namespace {namespace} does not exist")
    out: dict[str, dict[str, Any]] = {}
    for rc in kube.list_ray("rayclusters", namespace):
        name = (rc["metadata"].get("labels") or {}).get(INSTANCE)
        if name:
            out[name] = {"release": name, "mode": "cluster", "raycluster": rc}
    for job in kube.list_ray("rayjobs", namespace):
        name = (job["metadata"].get("labels") or {}).get(INSTANCE)
        if name:
            out[name] = {**out.get(name, {"raycluster": None}), "release": name, "mode": "job", "rayjob": job}
    return [out[k] for k in sorted(out)]


def _names(objects: list[dict[str, Any]]) -> str:
    return ", ".join(o["metadata"]["name"] for o in objects)
