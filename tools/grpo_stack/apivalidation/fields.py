"""The API server's field rules beyond names and quantities: enums, non-negative counts, label selectors, env
names and the names a pod's parts give each other (k8s.io/kubernetes pkg/apis/core/validation, apps/validation,
networking/validation and apimachinery's metav1 validation at v1.34). Each returns (dotted path, message)."""

from __future__ import annotations

from typing import Any

from . import names

PULL_POLICIES = ("Always", "IfNotPresent", "Never")
PROTOCOLS = ("TCP", "UDP", "SCTP")
SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
PROBES = ("readinessProbe", "livenessProbe", "startupProbe")
PROBE_COUNTS = ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold")
# validateSecurityContext / validatePodSecurityContext: IDs are int32 and never negative.
ID_FIELDS = ("runAsUser", "runAsGroup")
POD_ID_FIELDS = ("runAsUser", "runAsGroup", "fsGroup")
MAX_ID = 2**31 - 1
MAX_CHECKS = 10_000  # a flood of entries is refused by size elsewhere; never walk it all here


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def nonnegative(value: Any, at: str, what: str) -> list[tuple[str, str]]:
    if _is_int(value) and value < 0:
        return [(at, f"{what} {value}: must be greater than or equal to 0")]
    return []


def enum(value: Any, at: str, what: str, allowed: tuple[str, ...]) -> list[tuple[str, str]]:
    if isinstance(value, str) and value not in allowed:
        return [(at, f"{what} {value[:80]!r} is not supported: use one of {', '.join(allowed)}")]
    return []


def label_selector(selector: Any, at: str) -> list[tuple[str, str]]:
    """metav1validation.ValidateLabelSelector: label syntax in matchLabels, an operator from the enum, values
    only (and always) with In and NotIn."""
    if not isinstance(selector, dict):
        return []
    out = labels_map(selector.get("matchLabels"), f"{at}.matchLabels")
    for i, expr in enumerate((selector.get("matchExpressions") or [])[:MAX_CHECKS]):
        if not isinstance(expr, dict):
            continue
        where = f"{at}.matchExpressions.{i}"
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        if isinstance(key, str) and (why := names.qualified_name(key)):
            out.append((f"{where}.key", f"invalid label key {key[:80]!r}: {why}"))
        out += enum(op, f"{where}.operator", "selector operator", SELECTOR_OPERATORS)
        if op in ("In", "NotIn") and not values:
            out.append((f"{where}.values", f"operator {op} needs at least one value"))
        if op in ("Exists", "DoesNotExist") and values:
            out.append((f"{where}.values", f"operator {op} takes no values"))
        for j, value in enumerate(values[:MAX_CHECKS] if isinstance(values, list) else []):
            if isinstance(value, str) and (why := names.label_value(value)):
                out.append((f"{where}.values.{j}", f"invalid label value {value[:80]!r}: {why}"))
    return out


def labels_map(labels: Any, at: str) -> list[tuple[str, str]]:
    """ValidateLabels: a qualified-name key and a label value, for metadata labels and every selector map."""
    out = []
    if not isinstance(labels, dict):
        return out
    for key, value in list(labels.items())[:MAX_CHECKS]:
        if isinstance(key, str) and (why := names.qualified_name(key)):
            out.append((f"{at}.{key}", f"invalid label key {key[:80]!r}: {why}"))
        if isinstance(value, str) and (why := names.label_value(value)):
            out.append((f"{at}.{key}", f"invalid label value {value[:80]!r}: {why}"))
    return out


def env_name(name: Any, at: str) -> list[tuple[str, str]]:
    """validateEnvVarName with RelaxedEnvironmentVariableValidation (GA in v1.34): printable ASCII, no '='."""
    if not isinstance(name, str):
        return []
    if not name:
        return [(at, "env name is empty")]
    if "=" in name or any(not 32 <= ord(ch) <= 126 for ch in name):
        return [(at, f"invalid env name {name[:80]!r}: must consist of printable ASCII characters except '='")]
    return []


def container(c: dict[str, Any], at: str, volumes: set[str] | None) -> list[tuple[str, str]]:
    """One container's enum, count, env and mount rules; `volumes` are the pod's volume names (None: unknown)."""
    out = enum(c.get("imagePullPolicy"), f"{at}.imagePullPolicy", "imagePullPolicy", PULL_POLICIES)
    for j, port in enumerate(c.get("ports") or []):
        if isinstance(port, dict):
            out += enum(port.get("protocol"), f"{at}.ports.{j}.protocol", "protocol", PROTOCOLS)
    for j, var in enumerate((c.get("env") or [])[:MAX_CHECKS]):
        if isinstance(var, dict):
            out += env_name(var.get("name"), f"{at}.env.{j}.name")
    for probe in PROBES:
        p = c.get(probe)
        if isinstance(p, dict):
            for field in PROBE_COUNTS:
                out += nonnegative(p.get(field), f"{at}.{probe}.{field}", field)
    out += security_ids(c.get("securityContext"), f"{at}.securityContext", ID_FIELDS)
    if volumes is not None:
        for field in ("volumeMounts", "volumeDevices"):
            for j, mount in enumerate((c.get(field) or [])[:MAX_CHECKS]):
                name = mount.get("name") if isinstance(mount, dict) else None
                if isinstance(name, str) and name not in volumes:
                    out.append((f"{at}.{field}.{j}.name", f"{name[:80]!r} not found: no volume of the pod has "
                                "this name"))
    return out


def security_ids(context: Any, at: str, fields: tuple[str, ...]) -> list[tuple[str, str]]:
    out = []
    if isinstance(context, dict):
        for field in fields:
            value = context.get(field)
            if _is_int(value) and not 0 <= value <= MAX_ID:
                out.append((f"{at}.{field}", f"{field} {value}: must be between 0 and {MAX_ID}, inclusive"))
    return out


def pod_volumes(pod: dict[str, Any]) -> set[str] | None:
    volumes = pod.get("volumes")
    if volumes is None:
        return set()
    if not isinstance(volumes, list):
        return None
    found = {v.get("name") for v in volumes if isinstance(v, dict)}
    return None if None in found else found


def service(spec: dict[str, Any]) -> list[tuple[str, str]]:
    """ValidateService: selector labels, port protocols, and nodePorts only on NodePort/LoadBalancer."""
    out = labels_map(spec.get("selector"), "spec.selector")
    kind = spec.get("type") or "ClusterIP"
    for i, port in enumerate(spec.get("ports") or []):
        if not isinstance(port, dict):
            continue
        out += enum(port.get("protocol"), f"spec.ports.{i}.protocol", "protocol", PROTOCOLS)
        node_port = port.get("nodePort")
        if kind in ("ClusterIP", "ExternalName") and _is_int(node_port) and node_port != 0:
            out.append((f"spec.ports.{i}.nodePort", f"nodePort {node_port} may not be used when `type` is "
                        f"{kind!r}: use type NodePort or LoadBalancer, or drop it"))
    return out


POLICY_TYPES = ("Ingress", "Egress")


def network_policy(spec: dict[str, Any]) -> list[tuple[str, str]]:
    """ValidateNetworkPolicySpec: the selectors' label syntax, the ports' protocols and the policy types."""
    out = label_selector(spec.get("podSelector"), "spec.podSelector")
    types = spec.get("policyTypes")
    if isinstance(types, list):
        if len(types) > len(POLICY_TYPES):
            out.append(("spec.policyTypes", f"may not specify more than {len(POLICY_TYPES)} policyTypes"))
        for i, value in enumerate(types[:MAX_CHECKS]):
            out += enum(value, f"spec.policyTypes.{i}", "policyType", POLICY_TYPES)
    for direction, peers_key in (("ingress", "from"), ("egress", "to")):
        for i, rule in enumerate(spec.get(direction) or []):
            if not isinstance(rule, dict):
                continue
            for j, port in enumerate(rule.get("ports") or []):
                if isinstance(port, dict):
                    out += enum(port.get("protocol"), f"spec.{direction}.{i}.ports.{j}.protocol", "protocol",
                                PROTOCOLS)
            for j, peer in enumerate(rule.get(peers_key) or []):
                if isinstance(peer, dict):
                    for selector in ("podSelector", "namespaceSelector"):
                        out += label_selector(peer.get(selector), f"spec.{direction}.{i}.{peers_key}.{j}.{selector}")
    return out


def workload_counts(kind: str, spec: dict[str, Any]) -> list[tuple[str, str]]:
    """Replica-like counts the apps and batch validators require to be non-negative."""
    fields = {"Deployment": ("replicas", "minReadySeconds", "revisionHistoryLimit"),
              "StatefulSet": ("replicas", "minReadySeconds"), "ReplicaSet": ("replicas", "minReadySeconds"),
              "DaemonSet": ("minReadySeconds",), "Job": ("parallelism", "completions", "backoffLimit")}.get(kind, ())
    out = []
    for field in fields:
        out += nonnegative(spec.get(field), f"spec.{field}", field)
    return out
