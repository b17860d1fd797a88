"""The preflight checks, one function per prerequisite. Each reads the cluster (GET only) and yields hits in the
lint's shape; codes are stable and documented in docs/preflight.md. Nothing here writes to the cluster."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from ..kuberay_crd import KUBERAY_VERSION
from ..lint.context import LintContext
from ..lint.finding import Severity
from .apiserver import events_api_server
from .client import Cluster
from .hit import ClusterHit
from .kueue import queue
from .nodes import allocatable, node_labels, pods_per_node, selects, short_resources, untolerated_taints
from .plan import EFA, GPU, INSTANCE_TYPE, PodGroup, pod_groups, quantity

# code -> (name, summary); every check's hits carry one of these.
CODES = {
    "GRPO960": ("kuberay-crd",
                "The RayCluster CRD is missing, does not serve ray.io/v1, or would drop fields the chart sets."),
    "GRPO961": ("kuberay-operator", "No KubeRay operator runs in the cluster, or it is older than the chart targets."),
    "GRPO962": ("release-namespace-missing", "The release namespace does not exist."),
    "GRPO963": ("secret-missing", "A Secret the pods read (hf-token, tracking) or its key is missing or empty."),
    "GRPO964": ("storage-claim",
                "The shared PVC is missing, not Bound, not ReadWriteMany, or smaller than the run writes."),
    "GRPO965": ("node-shortage",
                "Too few nodes of an instance type the values need, with the GPUs, EFA, CPU and memory."),
    "GRPO966": ("device-plugin", "Nodes of the instance type advertise no nvidia.com/gpu or vpc.amazonaws.com/efa."),
    "GRPO967": ("kueue-queue", "The run's Kueue LocalQueue or ClusterQueue is missing, or can never admit its GPUs."),
    "GRPO968": ("events-api-server",
                "With supervision Events on, the head's egress misses an API server endpoint the cluster lists."),
}

NETWORK_POLICY_NOTE = ("whether NetworkPolicies are enforced cannot be read from the API: it depends on the "
                       "network plugin (VPC CNI with network policy enabled, Calico, Cilium); check it there")
LEASE_FRESH_S = 120




def crd(cluster: Cluster, ctx: LintContext, notes: list[str]) -> Iterator[ClusterHit]:
    if not ctx.component_enabled("raycluster"):
        return
    found = cluster.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/rayclusters.ray.io")
    key = "global.components.raycluster"
    if found is None:
        yield ClusterHit("GRPO960", key, "CRD rayclusters.ray.io is not installed: the RayCluster is refused",
                         remediation=f"install the KubeRay operator {KUBERAY_VERSION} Helm chart (it has the CRDs)")
        return
    versions = {v.get("name"): v for v in (found.get("spec") or {}).get("versions") or []}
    v1 = versions.get("v1")
    if not v1 or not v1.get("served"):
        served = sorted(k for k in versions if versions[k].get("served"))
        yield ClusterHit("GRPO960", key, f"CRD rayclusters.ray.io serves {served}, not ray.io/v1",
                         remediation=f"upgrade the KubeRay CRDs to {KUBERAY_VERSION}")
        return
    schema = ((v1.get("schema") or {}).get("openAPIV3Schema")) or {}
    notes.append(f"CRD rayclusters.ray.io serves ray.io/v1 (versions: {', '.join(sorted(versions))})")
    for o in ctx.of_kind("RayCluster"):
        for path in unknown_fields(o.obj.get("spec"), (schema.get("properties") or {}).get("spec") or {}, "spec"):
            yield ClusterHit("GRPO960", key, f"the installed RayCluster CRD does not know {path}: the API server "
                             f"drops it from RayCluster {o.name} (a CRD older than KubeRay {KUBERAY_VERSION})",
                             Severity.WARNING, f"upgrade the KubeRay CRDs to {KUBERAY_VERSION}")


def unknown_fields(value: Any, schema: dict[str, Any], path: str) -> Iterator[str]:
    """Paths in `value` that structural-schema pruning would remove (no property, no preserve-unknown-fields)."""
    if not isinstance(schema, dict) or schema.get("x-kubernetes-preserve-unknown-fields"):
        return
    if isinstance(value, dict):
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        if props is None and extra is None:
            return
        for k, v in value.items():
            if props is not None and k in props:
                yield from unknown_fields(v, props[k], f"{path}.{k}")
            elif isinstance(extra, dict):
                yield from unknown_fields(v, extra, f"{path}.{k}")
            elif extra is not True:
                yield f"{path}.{k}"
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, v in enumerate(value):
            yield from unknown_fields(v, schema["items"], f"{path}.{i}")


def operator(cluster: Cluster, ctx: LintContext, notes: list[str]) -> Iterator[ClusterHit]:
    if not ctx.component_enabled("raycluster"):
        return
    key = "global.components.raycluster"
    deployments = (cluster.get("/apis/apps/v1/deployments") or {}).get("items") or []
    for d in deployments:
        for c in (((d.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers") or []:
            image = str(c.get("image") or "")
            if "kuberay/operator" not in image:
                continue
            meta = d.get("metadata") or {}
            tag = image.rsplit("@", 1)[0].rpartition(":")[2] if ":" in image.rsplit("/", 1)[-1] else ""
            ready = int((d.get("status") or {}).get("readyReplicas") or 0)
            notes.append(f"KubeRay operator: Deployment {meta.get('namespace')}/{meta.get('name')}, image {image}, "
                         f"{ready} ready")
            if not ready:
                yield ClusterHit("GRPO961", key, f"the KubeRay operator Deployment {meta.get('namespace')}/"
                                 f"{meta.get('name')} has no ready replica: no RayCluster is reconciled")
            elif _older(tag, KUBERAY_VERSION):
                yield ClusterHit("GRPO961", key, f"the KubeRay operator is {tag}, older than {KUBERAY_VERSION} the "
                                 "chart targets (upgradeStrategy needs v1.6.0 or later; docs/preflight.md)",
                                 Severity.WARNING,
                                 f"upgrade the KubeRay operator to {KUBERAY_VERSION}")
            return
    for lease in (cluster.get("/apis/coordination.k8s.io/v1/leases") or {}).get("items") or []:
        meta, spec = lease.get("metadata") or {}, lease.get("spec") or {}
        if meta.get("name") == "ray-operator-leader" and _fresh(spec.get("renewTime")):
            notes.append(f"KubeRay operator: leader lease {meta.get('namespace')}/ray-operator-leader held by "
                         f"{spec.get('holderIdentity')}; its version is not visible in the API (no Deployment)")
            return
    yield ClusterHit("GRPO961", key, "no KubeRay operator found (no Deployment running a kuberay/operator image, no "
                     "fresh ray-operator-leader lease): the RayCluster would never get pods",
                     remediation=f"install the KubeRay operator {KUBERAY_VERSION} Helm chart")


def _older(tag: str, target: str) -> bool:
    have, want = _version(tag), _version(target)
    return have is not None and want is not None and have < want


def _version(tag: str) -> tuple[int, ...] | None:
    found = re.match(r"^v?(\d+)\.(\d+)(?:\.(\d+))?", tag or "")
    return tuple(int(x or 0) for x in found.groups()) if found else None


def _fresh(stamp: Any) -> bool:
    try:
        when = datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
    except ValueError:
        return False
    return (datetime.now(UTC) - when).total_seconds() < LEASE_FRESH_S


def namespace(cluster: Cluster, ctx: LintContext, notes: list[str]) -> Iterator[ClusterHit]:
    if cluster.get(f"/api/v1/namespaces/{ctx.namespace}") is None:
        yield ClusterHit("GRPO962", "", f"namespace {ctx.namespace!r} does not exist: the Secret and the PVC the "
                         "release needs cannot be in it", remediation=f"kubectl create namespace {ctx.namespace}, then "
                         "create the hf-token Secret and the PVC in it (README: install)")


def secrets(cluster: Cluster, ctx: LintContext, notes: list[str]) -> Iterator[ClusterHit]:
    """Every Secret reference under global.secrets: the Secret and its key exist and the value is not empty.
    The value is never read into anything kept: only the key names and whether each is empty leave `secret_keys`."""
    for name, ref in sorted((ctx.get("global.secrets") or {}).items()):
        if not isinstance(ref, dict) or not ref.get("name"):
            continue
        key_path = f"global.secrets.{name}"
        keys = secret_keys(cluster, ctx.namespace, str(ref["name"]))
        if keys is None:
            yield ClusterHit("GRPO963", f"{key_path}.name", f"Secret {ctx.namespace}/{ref['name']} does not exist: "
                             "the pods that read it stay in CreateContainerConfigError",
                             remediation=f"kubectl -n {ctx.namespace} create secret generic {ref['name']} "
                             f"--from-literal={ref.get('key')}=...")
        elif ref.get("key") not in keys:
            yield ClusterHit("GRPO963", f"{key_path}.key", f"Secret {ctx.namespace}/{ref['name']} has no key "
                             f"{ref.get('key')!r} (keys: {', '.join(sorted(keys)) or 'none'})")
        elif not keys[ref["key"]]:
            yield ClusterHit("GRPO963", f"{key_path}.key", f"Secret {ctx.namespace}/{ref['name']} key "
                             f"{ref.get('key')!r} is empty")


def secret_keys(cluster: Cluster, ns: str, name: str) -> dict[str, bool] | None:
    """Key -> non-empty, for one Secret; the values themselves are dropped here, before anything else sees them."""
    found = cluster.get(f"/api/v1/namespaces/{ns}/secrets/{name}")
    if found is None:
        return None
    data = {**(found.get("stringData") or {}), **(found.get("data") or {})}
    keys = {str(k): bool(v) for k, v in data.items()}
    found.clear()
    data.clear()
    return keys


def storage(cluster: Cluster, ctx: LintContext, notes: list[str]) -> Iterator[ClusterHit]:
    from ..lint.rules.storage_capacity import estimate

    claim = ctx.get("global.storage.claimName")
    if not claim:
        return
    key = "global.storage.claimName"
    pvc = cluster.get(f"/api/v1/namespaces/{ctx.namespace}/persistentvolumeclaims/{claim}")
    if pvc is None:
        yield ClusterHit("GRPO964", key, f"PVC {ctx.namespace}/{claim} does not exist: every pod that mounts it stays "
                         "Pending", remediation="create the FSx for Lustre PVC first (docs/storage.md)")
        return
    status = pvc.get("status") or {}
    modes = set(status.get("accessModes") or (pvc.get("spec") or {}).get("accessModes") or [])
    if status.get("phase") != "Bound":
        yield ClusterHit("GRPO964", key, f"PVC {ctx.namespace}/{claim} is {status.get('phase') or 'not Bound'}, not "
                         "Bound: the pods that mount it stay Pending until it binds")
    if "ReadWriteMany" not in modes:
        yield ClusterHit("GRPO964", key, f"PVC {ctx.namespace}/{claim} access modes {sorted(modes)} lack "
                         "ReadWriteMany: the Ray pods on several nodes all mount it")
    size = (status.get("capacity") or {}).get("storage") or \
        (((pvc.get("spec") or {}).get("resources") or {}).get("requests") or {}).get("storage")
    need = _estimate(estimate, ctx)
    if size is not None and need is not None:
        have = float(quantity(size))
        notes.append(f"PVC {ctx.namespace}/{claim}: {status.get('phase')}, {', '.join(sorted(modes))}, {size}; "
                     f"the run writes about {need[1]}")
        if need[0] > have:
            yield ClusterHit("GRPO964", key, f"PVC {ctx.namespace}/{claim} holds {size}; the run needs about {need[1]}",
                             remediation="grow the file system, or keep fewer checkpoints (trainer.keepCheckpoints)")


def _estimate(estimate, ctx: LintContext):
    try:
        return estimate(ctx)
    except (KeyError, TypeError, ValueError):  # values the job builder refuses: the lint reports those
        return None


def nodes(cluster: Cluster, ctx: LintContext, notes: list[str]) -> Iterator[ClusterHit]:
    items = (cluster.get("/api/v1/nodes") or {}).get("items") or []
    ready = [n for n in items if not (n.get("spec") or {}).get("unschedulable")]
    seen_types: set[str] = set()
    for group in pod_groups(ctx):
        yield from _group(group, ready, seen_types, notes)


def _group(group: PodGroup, nodes: list[dict], seen: set[str], notes: list[str]) -> Iterator[ClusterHit]:
    wanted = group.instance_type or "any type"
    req = group.requests
    gpu_pod = req.get(GPU, 0) > 0
    sev = Severity.ERROR if gpu_pod else Severity.WARNING
    labelled = [n for n in nodes if selects(group.spec, n)]
    if wanted not in seen and labelled:
        seen.add(wanted)
        notes.append(f"{wanted}: {len(labelled)} node(s); {_advertised(labelled[0])} allocatable on "
                     f"{node_labels(labelled[0]).get('kubernetes.io/hostname', labelled[0]['metadata']['name'])}")
    if not labelled:
        later = "" if gpu_pod else "; fine if an autoscaler (Karpenter, a managed node group) provisions it"
        yield ClusterHit("GRPO965", group.values_key, f"{group.owner}: no schedulable node matches its node selector "
                         f"({INSTANCE_TYPE}={wanted}){later}", sev)
        return
    for resource, plugin in ((GPU, "NVIDIA device plugin"), (EFA, "EFA device plugin (aws-efa-k8s-device-plugin)")):
        if req.get(resource, 0) > 0 and all(allocatable(n, resource) == 0 for n in labelled):
            yield ClusterHit("GRPO966", group.values_key, f"{group.owner} requests {req[resource]} {resource}, but no "
                             f"{wanted} node advertises any: the {plugin} is not running on them")
            return
    tolerated = [n for n in labelled if not untolerated_taints(group.spec, n)]
    if not tolerated:
        taint = untolerated_taints(group.spec, labelled[0])[0]
        yield ClusterHit("GRPO965", group.values_key, f"{group.owner}: every {wanted} node has taint "
                         f"{taint.get('key')}={taint.get('value', '')}:{taint.get('effect')}, which its pods do not "
                         "tolerate", sev)
        return
    room = sum(pods_per_node(group, n) for n in tolerated)
    if room >= group.replicas:
        return
    short = sorted({r for n in tolerated for r in short_resources(group, n)})
    need = ", ".join(_amount(k, v) for k, v in sorted(req.items()) if v > 0)
    why = f" (short of {', '.join(short)})" if short else ""
    yield ClusterHit("GRPO965", group.values_key, f"{group.owner} needs {group.replicas} pod(s) of {need}; the "
                     f"{len(tolerated)} {wanted} node(s) hold {room}{why}", sev,
                     "add nodes of the instance type, or lower the node count / requests in the values")


def _advertised(node: dict) -> str:
    alloc = (node.get("status") or {}).get("allocatable") or {}
    return ", ".join(f"{k}={alloc[k]}" for k in ("cpu", "memory", GPU, EFA) if k in alloc)


def _amount(resource: str, value) -> str:
    if resource in ("memory", "ephemeral-storage"):
        return f"{float(value) / 2**30:,.1f} GiB {resource}"
    text = f"{value:f}"
    return f"{text.rstrip('0').rstrip('.') if '.' in text else text} {resource}"


def device_plugins(cluster: Cluster, notes: list[str]) -> None:
    """A note naming the DaemonSets that look like the GPU / EFA device plugins (their absence is not an error:
    a node image or the GPU operator may advertise the resources; GRPO966 checks what the nodes advertise)."""
    found = []
    for ds in (cluster.get("/apis/apps/v1/daemonsets") or {}).get("items") or []:
        meta = ds.get("metadata") or {}
        images = [str(c.get("image") or "") for c in
                  (((ds.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers") or []]
        if any(k in " ".join(images) + str(meta.get("name")) for k in ("device-plugin", "gpu-operator")):
            found.append(f"{meta.get('namespace')}/{meta.get('name')}")
    notes.append(f"device plugin DaemonSets: {', '.join(found)}" if found else
                 "device plugin DaemonSets: none visible; the GPU/EFA counts above are what the nodes advertise")


CHECKS = (namespace, crd, operator, secrets, storage, nodes, queue, events_api_server)
