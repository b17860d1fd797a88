"""What controllers add to the pods and Services they create, so selectors are judged against the pods that will
really run (a Service that selects a JobSet's pods is not dangling because the manifest has no Pod object).

A label whose value differs between the controller's pods (a job index, a worker index) is a frozenset of the
values it takes; a value the controller makes up at run time (a random suffix, a uid) is UNKNOWN, which no
literal selector value equals.
"""

from __future__ import annotations

from typing import Any

UNKNOWN = frozenset()  # the controller picks it at run time: nothing a manifest writes can equal it

RAY = "ray.io/"
JOBSET = "jobset.sigs.k8s.io/"
LWS = "leaderworkerset.sigs.k8s.io/"


def controller_labels(obj: Any, pod_path: str) -> dict[str, str | frozenset[str]]:
    """Labels a controller always puts on the pods of the template at `pod_path` inside `obj` (a
    RenderedObject): KubeRay, JobSet, Kubeflow Trainer's TrainJob, LeaderWorkerSet, Job, CronJob and StatefulSet."""
    parts = pod_path.split(".")
    kind, name, spec = obj.kind, obj.name, obj.obj.get("spec") or {}
    out: dict[str, str | frozenset[str]] = {}
    if "headGroupSpec" in parts or "workerGroupSpecs" in parts:
        out.update(_ray(kind, name, spec, parts))
    if "replicatedJobs" in parts:
        out.update(_jobset(name, spec, parts))
    if kind == "LeaderWorkerSet":
        out.update(_lws(name, spec, parts))
    if kind == "TrainJob" and str(obj.obj.get("apiVersion", "")).startswith("trainer.kubeflow.org/"):
        out.update(_trainjob(name))
    if kind == "Job" and pod_path == "spec.template.spec":
        out.update(_job(name, spec))
    if kind == "CronJob":  # jobs are named <cronjob>-<schedule time>
        out.update({"job-name": UNKNOWN, "batch.kubernetes.io/job-name": UNKNOWN})
    if kind == "StatefulSet" and pod_path == "spec.template.spec":
        indices = _indices(spec.get("replicas", 1))
        out.update({"statefulset.kubernetes.io/pod-name": frozenset(f"{name}-{i}" for i in indices),
                    "apps.kubernetes.io/pod-index": indices})
    return out


def _ray(kind: str, name: str, spec: dict, parts: list[str]) -> dict:
    """KubeRay v1.7.0 labelPod (common/pod.go): a RayJob's or RayService's cluster is named
    `<name>-<5 random characters>` (utils GenerateRayClusterName), so its ray.io/cluster is not knowable."""
    cluster_spec = spec
    for key in ("rayClusterSpec", "rayClusterConfig"):
        if key in parts:
            cluster_spec = spec.get(key) or {}
    cluster: str | frozenset[str] = name if kind == "RayCluster" else UNKNOWN
    labels: dict = {RAY + "cluster": cluster, RAY + "is-ray-node": "yes", "app.kubernetes.io/name": "kuberay",
                    "app.kubernetes.io/created-by": "kuberay-operator"}
    if "headGroupSpec" in parts:
        node_type, group = "head", "headgroup"
    else:
        index = int(parts[parts.index("workerGroupSpecs") + 1])
        groups = cluster_spec.get("workerGroupSpecs") or []
        item = groups[index] if index < len(groups) and isinstance(groups[index], dict) else {}
        node_type, group = "worker", str(item.get("groupName", ""))
    labels.update({RAY + "node-type": node_type, RAY + "group": group})
    labels[RAY + "identifier"] = f"{cluster}-{node_type}"[-63:] if isinstance(cluster, str) else UNKNOWN
    if kind == "RayService":  # the serve label flips on the head; workers start serving
        labels[RAY + "serve"] = frozenset({"true", "false"}) if node_type == "head" else "true"
    return labels


def _jobset(name: str, spec: dict, parts: list[str]) -> dict:
    """jobset.x-k8s.io: every child Job is `<jobset>-<replicatedJob>-<index>`; its pods carry the JobSet labels
    and the Job's own."""
    index = int(parts[parts.index("replicatedJobs") + 1])
    rjobs = spec.get("replicatedJobs") or []
    rjob = rjobs[index] if index < len(rjobs) and isinstance(rjobs[index], dict) else {}
    rname = str(rjob.get("name", ""))
    indices = _indices(rjob.get("replicas", 1))
    jobs = frozenset(f"{name}-{rname}-{i}" for i in indices)
    job_spec = ((rjob.get("template") or {}).get("spec") or {})
    return {JOBSET + "jobset-name": name, JOBSET + "replicatedjob-name": rname, JOBSET + "job-index": indices,
            JOBSET + "replicatedjob-replicas": str(rjob.get("replicas", 1)), "job-name": jobs,
            "batch.kubernetes.io/job-name": jobs, **_completion_index(job_spec)}


def _trainjob(name: str) -> dict:
    """Kubeflow Trainer v2 runs a TrainJob as a JobSet of the TrainJob's own name (its jobset plugin builds
    `JobSet(trainJob.Name, trainJob.Namespace)`); the replicated jobs come from the runtime, unseen here."""
    return {JOBSET + "jobset-name": name, JOBSET + "replicatedjob-name": UNKNOWN, "job-name": UNKNOWN,
            "batch.kubernetes.io/job-name": UNKNOWN}


def _lws(name: str, spec: dict, parts: list[str]) -> dict:
    """LeaderWorkerSet: the leader is worker 0 of each group (from leaderTemplate, else from workerTemplate)."""
    lwt = spec.get("leaderWorkerTemplate") or {}
    size = lwt.get("size", 1)
    groups = _indices(spec.get("replicas", 1))
    if "leaderTemplate" in parts:
        workers: frozenset[str] = frozenset({"0"})
    elif "leaderTemplate" in lwt:
        workers = _indices(size) - {"0"}
    else:
        workers = _indices(size)
    return {LWS + "name": name, LWS + "group-index": groups, LWS + "worker-index": workers,
            LWS + "group-key": UNKNOWN, LWS + "template-revision-hash": UNKNOWN}


def _job(name: str, spec: dict) -> dict:
    return {"job-name": name, "batch.kubernetes.io/job-name": name, **_completion_index(spec)}


def _completion_index(job_spec: dict) -> dict:
    if job_spec.get("completionMode") != "Indexed":
        return {}
    return {"batch.kubernetes.io/job-completion-index": _indices(job_spec.get("completions", 1))}


def _indices(count: Any) -> frozenset[str]:
    n = count if isinstance(count, int) and not isinstance(count, bool) and 0 <= count <= 1024 else 1
    return frozenset(str(i) for i in range(max(n, 1)))


def controller_services(objects: list[Any]) -> set[str]:
    """Names of the Services controllers in the set create: KubeRay head (and RayService serve) Services, the
    headless Services JobSet and LeaderWorkerSet create for their pods' DNS names, and the proxy Service a Gateway
    API controller deploys for a Gateway, named `<gateway>-<gatewayClassName>` (Istio's automated deployment:
    `llm-d-inference-gateway-istio` for a Gateway of class istio)."""
    out: set[str] = set()
    for o in objects:
        spec = o.obj.get("spec") if isinstance(o.obj.get("spec"), dict) else {}
        if o.kind == "RayCluster":
            head = spec.get("headGroupSpec") or {}
            custom = ((head.get("headService") or {}).get("metadata") or {}).get("name")
            out.add(str(custom) if custom else f"{o.name}-head-svc")
        elif o.kind in ("RayJob", "RayService") and str(o.obj.get("apiVersion", "")).startswith("ray.io/"):
            out.add(f"{o.name}-head-svc")
            if o.kind == "RayService":
                out.add(f"{o.name}-serve-svc")
        elif o.kind == "JobSet":
            subdomain = (spec.get("network") or {}).get("subdomain")
            out.add(str(subdomain) if subdomain else o.name)
        elif o.kind == "LeaderWorkerSet":
            out.add(o.name)
        elif o.kind == "Gateway" and str(o.obj.get("apiVersion", "")).startswith("gateway.networking.k8s.io/") \
                and spec.get("gatewayClassName"):
            out.add(f"{o.name}-{spec['gatewayClassName']}")
    return out


def label_matches(labels: dict[str, Any], key: str, wanted: str) -> bool:
    """Whether some pod of the template carries key=wanted (a frozenset value: one of its values)."""
    value = labels.get(key)
    if isinstance(value, frozenset):
        return wanted in value
    return value is not None and value == wanted
