"""Helpers for the pod-security rules GRPO810-GRPO817 (not a rule: no CODE)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from ._objects import FirstLabelIndex, containers, selector_matches

EFA_RESOURCE = "vpc.amazonaws.com/efa"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"


def where(pod_path: str, field: str, i: int) -> str:
    return f"{pod_path}.{field}.{i}"


def pod_label(o, pod_path: str) -> str:
    """`RayCluster grpo-ray (head)` / `Deployment grpo-vllm`: how a finding names the pod."""
    if o.kind != "RayCluster":
        return f"{o.kind} {o.name}"
    return f"RayCluster {o.name} ({'head' if '.headGroupSpec.' in pod_path else 'worker group'})"


# Kinds that hold a Ray cluster's head and worker groups: KubeRay makes a RayCluster of a RayJob's rayClusterSpec
# and a RayService's rayClusterConfig.
RAY_CLUSTER_KINDS = frozenset({"RayCluster", "RayJob", "RayService"})


def is_ray_pod(o, pod_path: str) -> bool:
    """Whether the pod template is a Ray cluster's head or a worker group (a RayJob's submitter is not)."""
    return o.kind in RAY_CLUSTER_KINDS and any(f".{g}." in f".{pod_path}." for g in ("headGroupSpec",
                                                                                     "workerGroupSpecs"))


def is_privileged(c: dict[str, Any]) -> bool:
    return bool((c.get("securityContext") or {}).get("privileged"))


def seccomp_type(sc: Any) -> str | None:
    """The seccomp profile type a pod's or container's securityContext sets (`RuntimeDefault`, `Unconfined`, ...)."""
    profile = sc.get("seccompProfile") if isinstance(sc, dict) else None
    kind = profile.get("type") if isinstance(profile, dict) else None
    return str(kind) if kind else None


def requests_efa(c: dict[str, Any]) -> bool:
    return EFA_RESOURCE in _requested(c)


def _requested(c: dict[str, Any]) -> set[str]:
    """Resource names the container requests or limits at a non-zero count."""
    res = c.get("resources") if isinstance(c.get("resources"), dict) else {}
    out = set()
    for k in ("requests", "limits"):
        amounts = res.get(k) if isinstance(res.get(k), dict) else {}
        out |= {str(name) for name, n in amounts.items() if str(n) not in ("0", "")}
    return out


# RDMA device plugins besides EFA: the k8s-rdma-shared-dev-plugin (`rdma/hca_shared_devices_a`), NVIDIA's network
# operator and SR-IOV RDMA resources (`nvidia.com/rdma_...`, `nvidia.com/hca_...`, `mellanox.com/...`). All of them
# register memory for RDMA verbs, which pins pages and needs CAP_IPC_LOCK beyond RLIMIT_MEMLOCK.
RDMA_NAME = re.compile(r"rdma|hca|infiniband|roce|mlnx|mellanox|(^|[/_.-])ib([/_.-]|$)", re.IGNORECASE)


def requests_rdma(c: dict[str, Any]) -> bool:
    """The container requests EFA or another RDMA device plugin's resource (InfiniBand, RoCE)."""
    return any(name == EFA_RESOURCE or ("/" in name and RDMA_NAME.search(name)) for name in _requested(c))


def folded(ctx) -> bool:
    """Manifest mode (objects another project wrote, no values): the pod-hardening checks GRPO810-GRPO816 report
    through GRPO809, one warning per pod; the chart's own rendered output (values mode), and manifests under
    `pod-hardening: {each: true}` in the lint config, get each of them."""
    return not ctx.has_values and not (ctx.extra.get("pod-hardening") or {}).get("each")


def all_containers(pod: dict[str, Any]):
    yield from containers(pod)


def namespace_of(o, default: str) -> str:
    return (o.obj.get("metadata") or {}).get("namespace") or default


def policies_selecting(ctx, o, pod_path: str) -> list[tuple[Any, dict]]:
    """NetworkPolicies in the pod's namespace whose podSelector matches the pod's labels."""
    return list(ctx.derived(("policies-selecting", id(o), pod_path), lambda: _policies_selecting(ctx, o, pod_path)))


def _policies_selecting(ctx, o, pod_path: str) -> list[tuple[Any, dict]]:
    labels = ctx.pod_labels(o, pod_path)
    index = _policies_by_namespace(ctx).get(namespace_of(o, ctx.namespace))
    out = [(p, spec) for p, spec in (index.candidates(labels) if index else [])
           if selector_matches(spec.get("podSelector") or {}, labels)]
    managed = kuberay_policy(o, pod_path)
    if managed:
        out.append((o, managed))
    return out


def _policies_by_namespace(ctx) -> dict[str, FirstLabelIndex]:
    """The NetworkPolicies of each namespace, indexed by their podSelector's first label."""
    def index() -> dict[str, FirstLabelIndex]:
        out: dict[str, FirstLabelIndex] = {}
        for p in ctx.of_kind("NetworkPolicy"):
            spec = p.obj.get("spec") or {}
            selector = spec.get("podSelector") if isinstance(spec.get("podSelector"), dict) else {}
            out.setdefault(namespace_of(p, ctx.namespace), FirstLabelIndex()).add(selector.get("matchLabels"),
                                                                                  (p, spec))
        return out

    return ctx.derived("network-policies-by-namespace", index)


# KubeRay's `networkPolicy.mode` (RayCluster spec, RayJob rayClusterSpec, RayService rayClusterConfig): the operator
# creates one NetworkPolicy for the head and one per worker group that admit the cluster's own pods plus the
# `head`/`worker` ingressRules and egressRules the spec lists, and isolate the directions the mode names.
KUBERAY_POLICY_TYPES = {"DenyAll": ["Ingress", "Egress"], "DenyAllIngress": ["Ingress"], "DenyAllEgress": ["Egress"]}


def kuberay_policy(o, pod_path: str) -> dict | None:
    """The NetworkPolicy spec the KubeRay operator makes for the Ray pod at `pod_path`, or None."""
    parts = pod_path.split(".")
    role = "head" if "headGroupSpec" in parts else "worker" if "workerGroupSpecs" in parts else None
    if role is None:
        return None
    cluster = o.obj
    for part in parts[:parts.index("headGroupSpec" if role == "head" else "workerGroupSpecs")]:
        cluster = cluster.get(part) if isinstance(cluster, dict) else None
    policy = cluster.get("networkPolicy") if isinstance(cluster, dict) else None
    types = KUBERAY_POLICY_TYPES.get(str(policy.get("mode"))) if isinstance(policy, dict) else None
    if not types:
        return None
    rules = policy.get(role) if isinstance(policy.get(role), dict) else {}

    def listed(key: str) -> list[dict]:  # the spec's extra rules; the object schema reports malformed ones
        items = rules.get(key)
        return [r for r in items if isinstance(r, dict)] if isinstance(items, list) else []

    own = {"podSelector": {"matchLabels": {"ray.io/cluster": o.name}}}
    return {"policyTypes": types, "ingress": [{"from": [own]}, *listed("ingressRules")],
            "egress": [{"to": [own]}, *listed("egressRules")]}


def policy_types(spec: dict) -> set[str]:
    """policyTypes as Kubernetes defaults them: Ingress always, Egress when egress rules are present."""
    types = spec.get("policyTypes")
    if types:
        return set(types)
    return {"Ingress"} | ({"Egress"} if spec.get("egress") else set())


def policy_peers(spec: dict) -> Iterator[tuple[str, str, dict]]:
    """Each peer of a NetworkPolicy's rules: (its direction, its path, the peer); `from` for ingress, `to` for
    egress."""
    for direction, key in (("ingress", "from"), ("egress", "to")):
        rules = spec.get(direction)
        for i, rule in enumerate(rules if isinstance(rules, list) else []):
            peers = rule.get(key) if isinstance(rule, dict) else None
            for j, peer in enumerate(peers if isinstance(peers, list) else []):
                if isinstance(peer, dict):
                    yield direction, f"spec.{direction}.{i}.{key}.{j}", peer


def port_entry_admits(port, protocol: str, number: int, names: frozenset[str] = frozenset()) -> bool:
    """One entry of a NetworkPolicy rule's `ports` admits `protocol` `number`: the entry names no port (every
    port), a range (`endPort`) holding it, the number itself, or one of `names`."""
    if not isinstance(port, dict) or str(port.get("protocol", "TCP")).upper() != protocol:
        return False
    given, end = port.get("port"), port.get("endPort")
    if given is None:
        return True
    if isinstance(given, int) and isinstance(end, int):
        return given <= number <= end
    return given == number or str(given) in names


def port_admitted(rule: dict, port: int, names: set[str]) -> bool:
    ports = rule.get("ports") or []
    return not ports or any(str(p.get("port")) in ({str(port)} | names) or p.get("port") is None for p in ports)


def reached_from_other_namespaces(ctx, o, pod_path: str, port: int, names: set[str],
                                  pod: str = "the pod") -> str | None:
    """Why pods of other namespaces (or addresses outside the cluster) reach `port` of the pod, or None where the
    NetworkPolicies selecting it admit that port from nothing wider than pods of its own namespace: no ingress
    policy at all, a rule with no `from`, or a `namespaceSelector` / `ipBlock` peer on that port (the first found)."""
    policies = [spec for _p, spec in policies_selecting(ctx, o, pod_path) if "Ingress" in policy_types(spec)]
    if not policies:
        return f"no NetworkPolicy restricts ingress to {pod}"
    for spec in policies:
        for rule in spec.get("ingress") or []:
            if not isinstance(rule, dict) or not port_admitted(rule, port, names):
                continue
            peers = rule.get("from")
            if not peers:
                return "a NetworkPolicy admits it from anywhere"
            if any(isinstance(peer, dict) and ("ipBlock" in peer or "namespaceSelector" in peer) for peer in peers):
                return "a NetworkPolicy admits it from other namespaces or IP ranges"
    return None
