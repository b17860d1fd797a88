"""Helpers shared by the rules that read rendered objects (not a rule: no CODE)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...apivalidation.objects import custom_group
from ...apivalidation.podspecs import containers as containers  # the rules' reader of a pod's containers
from ...apivalidation.podspecs import is_pod_spec, node_at
from ..controllers import label_matches
from ._quantity import whole

# Pod-template component label -> the values section that shapes that pod (for locating findings).
COMPONENT_VALUES = {
    "ray-head": "raycluster.head",
    "ray-worker": "raycluster.worker",
    "sandbox-fusion": "sandbox-fusion",
    "reward-service": "reward-service",
    "fsx-utils": "fsx-utils",
    "vllm": "vllm",
    "lm-eval": "lm-eval",
}


def mapping(node: Any) -> dict:
    """node where it is a mapping, else an empty one: hostile or half-written input must not crash a rule."""
    return node if isinstance(node, dict) else {}


def pod_component(ctx, obj, pod_path: str) -> str | None:
    return ctx.pod_labels(obj, pod_path).get("app.kubernetes.io/component")


def values_section(ctx, obj, pod_path: str) -> str | None:
    """The values prefix for this pod when linting values (None for plain manifests)."""
    if not ctx.has_values:
        return None
    # A helm test pod ("<component>-test") is shaped by its component's values (same image).
    return COMPONENT_VALUES.get((pod_component(ctx, obj, pod_path) or "").removesuffix("-test"))


def argv_of(c: dict) -> list[str]:
    """The container's `command` then `args`, each word a string (non-scalar items are the schema's finding)."""
    return [str(w) for key in ("command", "args") if isinstance(c.get(key), list) for w in c[key]
            if isinstance(w, (str, int, float))]


def literal_env(c: dict) -> dict[str, str]:
    """The container's env entries with a literal value (valueFrom names nothing readable here)."""
    items = c.get("env") if isinstance(c.get("env"), list) else []
    return {str(e["name"]): str(e["value"]) for e in items
            if isinstance(e, dict) and "name" in e and isinstance(e.get("value"), (str, int, float))}


def torch_rank(env: dict[str, str]) -> tuple[int, int, str] | None:
    """(WORLD_SIZE, RANK, MASTER_ADDR) where a container's literal env (`literal_env`) makes it one rank of a
    torch.distributed world: a WORLD_SIZE above one, a numeric RANK and a MASTER_ADDR."""
    world, rank, master = (env.get(k, "").strip() for k in ("WORLD_SIZE", "RANK", "MASTER_ADDR"))
    if world.isdigit() and int(world) > 1 and rank.isdigit() and master:
        return int(world), int(rank), master
    return None


def pinned_to_node(pod: dict[str, Any]) -> bool:
    """The pod runs on one named node: `nodeName`, or a `kubernetes.io/hostname` node selector."""
    selector = pod.get("nodeSelector") if isinstance(pod.get("nodeSelector"), dict) else {}
    return bool(pod.get("nodeName")) or "kubernetes.io/hostname" in selector


def claim_volumes(pod: dict[str, Any]) -> Iterator[tuple[int, dict[str, Any], str]]:
    """Each volume of a pod spec that mounts a PersistentVolumeClaim: its index, the volume, and the claim's name
    as a string (a volume with no readable `claimName` is the schema's finding, not a claim)."""
    volumes = pod.get("volumes") if isinstance(pod.get("volumes"), list) else []
    for i, vol in enumerate(volumes):
        source = vol.get("persistentVolumeClaim") if isinstance(vol, dict) else None
        name = source.get("claimName") if isinstance(source, dict) else None
        if isinstance(name, str) and name:
            yield i, vol, name


# Restart policies under which a pod's work ends: a pod's own, or a replica spec's (Kubeflow's training jobs'
# `*ReplicaSpecs.<role>.restartPolicy`; `ExitCode` restarts only on a retryable exit code).
FINITE_RESTART_POLICIES = frozenset({"Never", "OnFailure", "ExitCode"})
BATCH_KINDS = frozenset({"Job", "CronJob"})


def runs_to_completion(o, pod_path: str, pod: dict[str, Any]) -> bool:
    """Whether the pods of this template end when their work does: a batch/v1 Job's or CronJob's, a pod whose
    restartPolicy is Never or OnFailure, or one whose replica spec (the mapping that holds its `template`) restarts
    it only on failure (a Kubeflow training job's replica that states no policy: its operator defaults it to Never,
    a PyTorchJob's to OnFailure, kubeflow/training-operator pkg/apis/kubeflow.org/v1 *_types.go). Anything else (a
    Deployment, a Ray cluster's groups, a Pod left at Always) runs until stopped."""
    if o.kind in BATCH_KINDS and str(o.obj.get("apiVersion", "")).startswith("batch/"):
        return True
    if pod.get("restartPolicy", "Always") in FINITE_RESTART_POLICIES:
        return True
    replica = replica_spec(o, pod_path)
    if replica is None:
        return False
    if "restartPolicy" not in replica and str(o.obj.get("apiVersion", "")).startswith("kubeflow.org/"):
        return True  # the training operators default a replica's policy to Never (OnFailure for a PyTorchJob's)
    return replica.get("restartPolicy") in FINITE_RESTART_POLICIES


def for_finite_work(o, pod_path: str, pod: dict[str, Any]) -> bool:
    """`runs_to_completion`, or any pod of a RayJob: its cluster exists to run the job's entrypoint, so its groups'
    pods serve finite work though each runs until stopped."""
    return o.kind == "RayJob" or runs_to_completion(o, pod_path, pod)


def replica_spec(o, pod_path: str) -> dict[str, Any] | None:
    """The mapping that holds the pod template at `pod_path` (a Deployment's spec, a training job's replica spec),
    or None for a pod spec that is not a template's."""
    if not pod_path.endswith(".template.spec"):
        return None
    replica = node_at(o.obj, pod_path.removesuffix(".template.spec"))
    return replica if isinstance(replica, dict) else None


# Kinds whose containers are templates other resources complete: a KServe runtime's container gets the
# InferenceService's resources merged in, and may get its command replaced.
RUNTIME_TEMPLATE_KINDS = frozenset({"ServingRuntime", "ClusterServingRuntime"})


SERVING_KEYS = frozenset({"port", "ports", "containerPort", "expose"})


def custom_resource(obj: dict[str, Any]) -> bool:
    """An object of an API group no Kubernetes release serves: its fields are its operator's."""
    return custom_group(obj.get("apiVersion"))


def inline_containers(o) -> Iterator[tuple[str, dict[str, Any], bool]]:
    """(path, mapping, serves) for each container a custom resource describes inline, outside any pod template: a
    mapping under its spec with an `image` and `resources` (its operator builds the container from them: a
    NIMService's spec, a `mainContainer`). `serves`: the mapping, or the resource's spec, declares a port or an
    `expose` section."""
    spec = o.obj.get("spec")
    if not custom_resource(o.obj) or not isinstance(spec, dict):
        return
    serves = _has_key(spec, SERVING_KEYS)
    for path, node in _inline(spec, lambda n: "image" in n and isinstance(n.get("resources"), dict)):
        yield path, node, serves or _has_key(node, SERVING_KEYS)


def inline_commands(o) -> Iterator[tuple[str, dict[str, Any]]]:
    """(path, mapping) for each container a custom resource describes inline, outside any pod template, with the
    command it runs: a mapping under its spec with an `image` and a `command` or `args` list (Dynamo's
    `extraPodSpec.mainContainer`, whose resources sit beside it rather than in it)."""
    spec = o.obj.get("spec")
    if custom_resource(o.obj) and isinstance(spec, dict):
        yield from _inline(spec, lambda n: "image" in n and any(isinstance(n.get(k), list)
                                                                for k in ("command", "args")))


def _inline(spec: dict[str, Any], is_container) -> Iterator[tuple[str, dict[str, Any]]]:
    """(path, mapping) for each mapping under `spec`, outside any pod spec and any container list, that
    `is_container` accepts; not looking inside one it accepted."""
    stack: list[tuple[str, Any]] = [("spec", spec)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, dict):
            if is_pod_spec(node):
                continue
            if is_container(node):
                yield path, node
                continue
            stack += [(f"{path}.{k}", v) for k, v in node.items() if k not in ("containers", "initContainers")]
        elif isinstance(node, list):
            stack += [(f"{path}.{i}", v) for i, v in enumerate(node)]


def _has_key(node: Any, keys: frozenset[str], depth: int = 0) -> bool:
    if depth > 12:
        return False
    if isinstance(node, dict):
        return any(k in keys or _has_key(v, keys, depth + 1) for k, v in node.items())
    if isinstance(node, list):
        return any(_has_key(v, keys, depth + 1) for v in node)
    return False


def selector_matches(selector: dict[str, Any], labels: dict[str, Any]) -> bool:
    """Kubernetes LabelSelector semantics (matchLabels AND matchExpressions), against the labels of a template's
    pods (a frozenset value: the pods carry one of those values each; empty: a value picked at run time)."""
    values_of = {k: (v if isinstance(v, frozenset) else frozenset({v})) for k, v in labels.items()}
    for k, v in (selector.get("matchLabels") or {}).items():
        if not label_matches(labels, k, str(v)):
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key"), expr.get("operator"), {str(v) for v in expr.get("values") or []}
        present = key in labels
        if op == "In" and not (present and values_of[key] & values):
            return False
        if op == "NotIn" and present and values_of[key] and values_of[key] <= values:
            return False
        if op == "Exists" and not present:
            return False
        if op == "DoesNotExist" and present:
            return False
    return True


def label_pairs(labels: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(key, value) for every label value some pod of a template carries (a frozenset value: each of its values;
    see LintContext.pod_labels)."""
    for key, value in labels.items():
        for v in sorted(value) if isinstance(value, frozenset) else (value,):
            yield key, v


class FirstLabelIndex:
    """Label selectors by their first matchLabels entry: the selectors a pod's labels can satisfy are found from
    those labels, not by trying every selector (selectors with no matchLabels are always candidates). Candidates
    come in the order they were added; the caller still matches each one with `selector_matches`."""

    def __init__(self):
        self._by_first: dict[tuple[str, str], list[tuple[int, Any]]] = {}
        self._always: list[tuple[int, Any]] = []
        self._added = 0

    def add(self, match_labels: Any, item: Any) -> None:
        entry = (self._added, item)
        self._added += 1
        first = next(iter(match_labels.items()), None) if isinstance(match_labels, dict) else None
        if first is None:
            self._always.append(entry)
        else:
            self._by_first.setdefault((str(first[0]), str(first[1])), []).append(entry)

    def candidates(self, labels: dict[str, Any]) -> list[Any]:
        found = dict(self._always)
        for pair in label_pairs(labels):
            found.update(self._by_first.get(pair, ()))
        return [item for _i, item in sorted(found.items())]


def selector_keys(selector: dict[str, Any]) -> list[str]:
    keys = list((selector.get("matchLabels") or {}).keys())
    keys += [e.get("key") for e in selector.get("matchExpressions") or [] if e.get("key")]
    return keys


def pods_of(o, pod_path: str) -> int:
    """How many pods the template at pod_path can run at once (2 stands for "several" where it is open-ended)."""
    spec = o.obj.get("spec") if isinstance(o.obj.get("spec"), dict) else {}
    if o.kind == "DaemonSet":
        return 2
    if o.kind in ("Deployment", "ReplicaSet", "StatefulSet"):
        return whole(spec.get("replicas"), 1)
    if o.kind == "Job":
        return whole(spec.get("parallelism"), 1)
    if o.kind == "CronJob":
        return whole(((spec.get("jobTemplate") or {}).get("spec") or {}).get("parallelism"), 1)
    if o.kind == "LeaderWorkerSet":
        size = whole((spec.get("leaderWorkerTemplate") or {}).get("size"), 1)
        groups = whole(spec.get("replicas"), 1)
        return groups * (1 if ".leaderTemplate." in f"{pod_path}." else size)
    if ".workerGroupSpecs." in pod_path:
        group = node_at(o.obj, pod_path.split(".template.spec")[0])
        group = group if isinstance(group, dict) else {}
        largest = max(whole(group.get("replicas"), 1), whole(group.get("maxReplicas"), 0))
        return largest * whole(group.get("numOfHosts"), 1)
    if ".replicatedJobs." in pod_path:
        job = node_at(o.obj, pod_path.split(".template.spec.template.spec")[0])
        job = job if isinstance(job, dict) else {}
        inner = ((job.get("template") or {}).get("spec") or {}) if isinstance(job.get("template"), dict) else {}
        return whole(job.get("replicas"), 1) * whole(inner.get("parallelism"), 1)
    return 1
