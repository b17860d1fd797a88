"""The API-server refusals of one object that a schema does not express: name and label syntax, quantities,
ports, CIDRs, and workload selectors that must select their own pod template. Returns (dotted path, message)."""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
from collections.abc import Iterator
from typing import Any

from . import fields, names, quantity
from .podspecs import find_pod_specs, node_at

# Kinds whose metadata.name must be a DNS-1123 label (the rest: a DNS-1123 subdomain).
LABEL_NAMED = frozenset(("Namespace",))
DNS1035_NAMED = frozenset(("Service",))
# RBAC names need only be a path segment (`system:controller:job-controller`): pkg/apis/rbac/validation.
PATH_SEGMENT_NAMED = frozenset(("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"))
WORKLOADS = frozenset(("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet"))
# Where pod specs sit in the built-in kinds the checks below reach.
POD_SPEC_PATHS = {"Pod": "spec", "Deployment": "spec.template.spec", "ReplicaSet": "spec.template.spec",
                  "StatefulSet": "spec.template.spec", "DaemonSet": "spec.template.spec", "Job": "spec.template.spec",
                  "CronJob": "spec.jobTemplate.spec.template.spec"}
# Volumes an operator adds to the pods it builds, by API group: a mount may name them without declaring them.
# KubeRay: the /dev/shm emptyDir and the autoscaler's log volume (ray-operator/controllers/ray/common/pod.go,
# SharedMemoryVolumeName and RayLogVolumeName). Another operator's additions are unknown: mounts are not checked.
OPERATOR_VOLUMES: dict[str, frozenset[str]] = {"ray.io": frozenset(("shared-mem", "ray-logs"))}
MAX_NAME_CHECKS = 10_000  # a flood of labels is refused by size elsewhere; never walk it all here


def errors(obj: dict[str, Any]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    kind = obj.get("kind")
    rbac = str(obj.get("apiVersion", "")).startswith("rbac.authorization.k8s.io/")
    out += _metadata(obj.get("metadata"), "metadata", kind if rbac or kind not in PATH_SEGMENT_NAMED else None,
                     top=True)
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    if kind in WORKLOADS or kind == "Job":
        out += fields.workload_counts(kind, spec)
    if kind in WORKLOADS:
        out += _selector_matches(spec)
    if kind == "Service":
        out += _service_ports(spec) + fields.service(spec)
    if kind == "NetworkPolicy":
        out += _network_policy(spec) + fields.network_policy(spec)
    if kind in ("ConfigMap", "Secret"):
        out += _data_size(obj) + _undecodable(obj)
    path = POD_SPEC_PATHS.get(kind)
    if path:
        pod = node_at(obj, path)
        if isinstance(pod, dict):
            out += _template(obj, path, pod, _claim_volumes(spec) if kind == "StatefulSet" else frozenset())
    elif custom_group(obj.get("apiVersion")):
        # KubeRay copies a group's template metadata and spec into each Pod it creates; another operator's
        # additions to its pods are unknown (None: their mounts are not checked)
        added = OPERATOR_VOLUMES.get(str(obj.get("apiVersion")).partition("/")[0])
        for where, pod in find_pod_specs(obj):
            out += _template(obj, where, pod, added)
    return out


def _claim_volumes(spec: dict[str, Any]) -> frozenset[str]:
    """The volumes a StatefulSet's controller adds to each Pod, one per `volumeClaimTemplates` entry: its mounts may
    name them (the API server does not validate a StatefulSet's pod spec at all; the Pods it makes are)."""
    claims = spec.get("volumeClaimTemplates")
    names = {(c.get("metadata") or {}).get("name") for c in claims or [] if isinstance(c, dict)} \
        if isinstance(claims, list) else set()
    return frozenset(n for n in names if isinstance(n, str))


# The API groups with a dot in their name that the API server itself serves (k8s.io/api v0.33: one package per group
# under staging/src/k8s.io/api). Other `*.k8s.io` groups are served by CRDs or aggregated servers of SIG projects:
# the VerticalPodAutoscaler's `autoscaling.k8s.io`, `snapshot.storage.k8s.io`, `gateway.networking.k8s.io`,
# `metrics.k8s.io`.
KUBERNETES_GROUPS = frozenset({
    "admissionregistration.k8s.io", "apiextensions.k8s.io", "apiregistration.k8s.io", "authentication.k8s.io",
    "authorization.k8s.io", "certificates.k8s.io", "coordination.k8s.io", "discovery.k8s.io", "events.k8s.io",
    "flowcontrol.apiserver.k8s.io", "internal.apiserver.k8s.io", "networking.k8s.io", "node.k8s.io",
    "rbac.authorization.k8s.io", "resource.k8s.io", "scheduling.k8s.io", "storage.k8s.io", "storagemigration.k8s.io",
})


def custom_group(api_version: Any) -> bool:
    """A custom resource's group (ray.io, jobset.x-k8s.io, autoscaling.k8s.io: a dot in it, and not a group of
    KUBERNETES_GROUPS): never one the API server itself serves, so its fields are its operator's."""
    group = api_version.rpartition("/")[0] if isinstance(api_version, str) else ""
    return "." in group and group not in KUBERNETES_GROUPS


def _template(obj: dict[str, Any], where: str, pod: dict[str, Any],
              added: frozenset[str] | None = frozenset()) -> list[tuple[str, str]]:
    """A pod spec at `where` and, when it is a template's `spec`, the template's own labels and annotations: what
    the API server refuses in the Pods made from it. A custom resource is admitted by its CRD schema alone, so
    its pods are refused only later, when its operator creates them."""
    parent, _, last = where.rpartition(".")
    template = node_at(obj, parent) if parent and last == "spec" else None
    out = []
    if isinstance(template, dict):
        out += _metadata(template.get("metadata"), f"{parent}.metadata", None, top=False)
    return out + _pod(pod, where, added)


MAX_DATA_BYTES = 1024 * 1024  # ValidateConfigMap / ValidateSecret: data + binaryData at most 1 MiB


def _data_size(obj: dict[str, Any]) -> list[tuple[str, str]]:
    total = 0
    for field in ("data", "binaryData", "stringData"):
        values = obj.get(field)
        if isinstance(values, dict):
            total += sum(len(k) + len(str(v).encode()) for k, v in values.items())
    if total > MAX_DATA_BYTES:
        return [("data", f"{obj.get('kind')} data is {total} bytes: must be no more than {MAX_DATA_BYTES} bytes "
                 "(Kubernetes' limit); shorten the values it carries")]
    return []


# Fields whose values are bytes, sent as base64 text: a Secret's `data`, a ConfigMap's `binaryData` (the API server
# decodes them as Go's encoding/json decodes a []byte: standard alphabet, padded; line breaks are skipped).
BYTES_FIELDS = {"Secret": "data", "ConfigMap": "binaryData"}


# A value SOPS encrypted in place (`ENC[AES256_GCM,data:...,type:str]`): the file is decrypted before it is applied
# (Flux's kustomize-controller, `sops -d | kubectl apply`), so the applied value is the plain text, which no file holds.
SOPS_CIPHERTEXT = re.compile(r"^ENC\[[A-Z0-9_]+,data:[^\]]*\]$")


def sops_ciphertext(value: Any) -> bool:
    return isinstance(value, str) and bool(SOPS_CIPHERTEXT.match(value.strip()))


def sops_encrypted(doc: Any) -> bool:
    """A manifest SOPS encrypted: its `sops` metadata (with the message authentication code) beside the object."""
    return isinstance(doc, dict) and isinstance(doc.get("sops"), dict) and "mac" in doc["sops"]


def _undecodable(obj: dict[str, Any]) -> list[tuple[str, str]]:
    field = BYTES_FIELDS.get(obj.get("kind"))
    values = obj.get(field) if field else None
    out = []
    for key, value in values.items() if isinstance(values, dict) else ():
        if not isinstance(value, str) or sops_ciphertext(value):
            continue  # a number or a map is the object schema's type error; ciphertext is decrypted first
        try:
            base64.b64decode(value.replace("\r", "").replace("\n", ""), validate=True)
        except (binascii.Error, ValueError):
            plain = "stringData" if field == "data" else "data"
            out.append((f"{field}.{key}", f"{field}.{key} is not base64 ({value[:40]!r}): the API "
                        f"server refuses the object (illegal base64 data); base64-encode the value, or give the plain "
                        f"text under {plain}"))
    return out


def _metadata(meta: Any, where: str, kind: str | None, top: bool) -> list[tuple[str, str]]:
    if top and _unnamed(meta):
        return [(f"{where}.name", "name or generateName is required: the API server refuses an object without "
                 "one (set metadata.name)")]
    if not isinstance(meta, dict):
        return []
    out = []
    name = meta.get("name")
    if top and isinstance(name, str):
        check = (names.dns1035_label if kind in DNS1035_NAMED else
                 names.dns1123_label if kind in LABEL_NAMED else
                 names.path_segment_name if kind in PATH_SEGMENT_NAMED else names.dns1123_subdomain)
        why = check(name)
        if why:
            out.append((f"{where}.name", f"invalid name {name[:80]!r}: {why}"))
    ns = meta.get("namespace")
    if top and isinstance(ns, str) and ns and (why := names.dns1123_label(ns)):
        out.append((f"{where}.namespace", f"invalid namespace {ns[:80]!r}: {why}"))
    out += fields.labels_map(meta.get("labels"), f"{where}.labels")
    annotations = meta.get("annotations")
    if isinstance(annotations, dict):
        for key in list(annotations)[:MAX_NAME_CHECKS]:
            if isinstance(key, str) and (why := names.qualified_name(key)):
                out.append((f"{where}.annotations.{key}", f"invalid annotation key {key[:80]!r}: {why}"))
    return out


def _unnamed(meta: Any) -> bool:
    """No name and no generateName. A null name is left alone: it may be a placeholder not rendered yet."""
    if not isinstance(meta, dict):
        return meta is None
    return meta.get("name", "") == "" and not meta.get("generateName")


def _selector_matches(spec: dict[str, Any]) -> list[tuple[str, str]]:
    """apps/v1 ValidateDeploymentSpec & co.: a non-empty selector that selects the template's labels."""
    selector = spec.get("selector")
    template = spec.get("template") if isinstance(spec.get("template"), dict) else {}
    labels = node_at(template, "metadata.labels")
    labels = labels if isinstance(labels, dict) else {}
    if not isinstance(selector, dict) or not (selector.get("matchLabels") or selector.get("matchExpressions")):
        return [("spec.selector", "empty selector is invalid for a workload (it would select every pod)")]
    out = fields.label_selector(selector, "spec.selector")
    if not matches(selector, labels):
        out.append(("spec.template.metadata.labels", "`selector` does not match template `labels`: the "
                    "workload would never own the pods it creates"))
    return out


def matches(selector: dict[str, Any], labels: dict[str, Any]) -> bool:
    """metav1.LabelSelectorAsSelector(selector).Matches(labels)."""
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        if not isinstance(expr, dict):
            return False
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


def _service_ports(spec: dict[str, Any]) -> list[tuple[str, str]]:
    out = []
    ports = spec.get("ports") or []
    named: set[str] = set()
    for i, port in enumerate(ports):
        if not isinstance(port, dict):
            continue
        where = f"spec.ports.{i}"
        name = port.get("name")
        if len(ports) > 1 and not name:
            out.append((f"{where}.name", "a Service with more than one port must name each of them"))
        elif isinstance(name, str) and name in named:
            out.append((f"{where}.name", f"port name {name[:80]!r} is used twice: each port needs its own"))
        named.add(name)
        if "port" in port and (why := names.port_number(port["port"])):
            out.append((f"{where}.port", f"invalid port {port['port']!r}: {why}"))
        target = port.get("targetPort")
        if isinstance(target, int) and (why := names.port_number(target)):
            out.append((f"{where}.targetPort", f"invalid targetPort {target!r}: {why}"))
        if isinstance(target, str) and (why := names.port_name(target)):
            out.append((f"{where}.targetPort", f"invalid targetPort name {target[:80]!r}: {why}"))
        if isinstance(port.get("nodePort"), int) and port["nodePort"] != 0 and (
                why := names.port_number(port["nodePort"])):
            out.append((f"{where}.nodePort", f"invalid nodePort {port['nodePort']!r}: {why}"))
        if isinstance(port.get("name"), str) and port["name"] and (why := names.dns1123_label(port["name"])):
            out.append((f"{where}.name", f"invalid port name {port['name'][:80]!r}: {why}"))
    return out


def _network_policy(spec: dict[str, Any]) -> list[tuple[str, str]]:
    out = []
    for direction, peers_key in (("ingress", "from"), ("egress", "to")):
        for i, rule in enumerate(spec.get(direction) or []):
            if not isinstance(rule, dict):
                continue
            for j, port in enumerate(rule.get("ports") or []):
                if isinstance(port, dict):
                    out += _policy_port(port, f"spec.{direction}.{i}.ports.{j}")
            for j, peer in enumerate(rule.get(peers_key) or []):
                if not isinstance(peer, dict):
                    continue
                where = f"spec.{direction}.{i}.{peers_key}.{j}"
                given = [k for k in ("podSelector", "namespaceSelector", "ipBlock") if peer.get(k) is not None]
                if not given:  # `podSelector: null` alone is no peer at all (ValidateNetworkPolicyPeer)
                    out.append((where, "must specify a peer (podSelector, namespaceSelector or ipBlock)"))
                elif "ipBlock" in given and len(given) > 1:
                    out.append((where, "may not specify both ipBlock and another peer"))
                block = peer.get("ipBlock")
                if isinstance(block, dict):
                    out += _ip_block(block, f"{where}.ipBlock")
    return out


def _policy_port(port: dict[str, Any], where: str) -> list[tuple[str, str]]:
    """ValidateNetworkPolicyPort: a number or a port name, and an endPort only after a number it does not
    undercut."""
    number, end = port.get("port"), port.get("endPort")
    if isinstance(number, bool):
        return []
    if isinstance(number, int):
        out = [(f"{where}.port", f"invalid port {number!r}: {why}")] if (why := names.port_number(number)) else []
        if isinstance(end, int) and not isinstance(end, bool):
            if end < number:
                out.append((f"{where}.endPort", f"endPort {end} must be greater than or equal to `port` ({number})"))
            elif why := names.port_number(end):
                out.append((f"{where}.endPort", f"invalid endPort {end!r}: {why}"))
        return out
    if end is not None:
        reason = "non-numeric" if isinstance(number, str) else "not specified"
        return [(f"{where}.endPort", f"endPort may not be specified when `port` is {reason}")]
    if isinstance(number, str) and (why := names.port_name(number)):
        return [(f"{where}.port", f"invalid port name {number[:80]!r}: {why}")]
    return []


def _network(text: Any) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    """net.ParseCIDR: an address and a prefix length (host bits may be set); never a netmask or a bare address."""
    if not isinstance(text, str) or text.count("/") != 1 or not text.rpartition("/")[2].isdigit():
        return None
    try:
        return ipaddress.ip_network(text, strict=False)
    except ValueError:
        return None


def _ip_block(block: dict[str, Any], where: str) -> list[tuple[str, str]]:
    cidr = _network(block.get("cidr"))
    if cidr is None:
        return [(f"{where}.cidr", f"invalid CIDR {str(block.get('cidr'))[:80]!r}: must be a valid CIDR "
                 "(e.g. 10.0.0.0/16)")]
    out = []
    for k, text in enumerate(block.get("except") or []):
        sub = _network(text)
        if sub is None:
            out.append((f"{where}.except.{k}", f"invalid CIDR {str(text)[:80]!r}: must be a valid CIDR"))
        elif sub.version != cidr.version or not sub.subnet_of(cidr) or sub == cidr:
            out.append((f"{where}.except.{k}", f"{text!r} must be a strict subset of `cidr` {block['cidr']!r}"))
    return out


def _containers(pod: dict[str, Any], where: str) -> Iterator[tuple[str, dict[str, Any]]]:
    for field in ("initContainers", "containers", "ephemeralContainers"):
        for i, c in enumerate(pod.get(field) or []):
            if isinstance(c, dict):
                yield f"{where}.{field}.{i}", c


def _pod(pod: dict[str, Any], where: str, added: frozenset[str] | None = frozenset()) -> list[tuple[str, str]]:
    """`added`: the volumes the pod's creator adds beyond its spec (None: unknown, mounts are not checked)."""
    out = fields.security_ids(pod.get("securityContext"), f"{where}.securityContext", fields.POD_ID_FIELDS)
    volumes = fields.pod_volumes(pod)
    out += _volume_names(pod.get("volumes"), f"{where}.volumes")
    volumes = None if volumes is None or added is None else volumes | added
    containers: set[str] = set()
    for cwhere, c in _containers(pod, where):
        out += fields.container(c, cwhere, volumes)
        name = c.get("name")
        if isinstance(name, str) and (why := names.dns1123_label(name)):
            out.append((f"{cwhere}.name", f"invalid container name {name[:80]!r}: {why}"))
        elif isinstance(name, str) and name in containers:
            out.append((f"{cwhere}.name", f"container name {name!r} is used twice in the pod: each container "
                        "needs its own"))
        containers.add(name)
        port_names: set[str] = set()
        for j, port in enumerate(c.get("ports") or []):
            if not isinstance(port, dict):
                continue
            pwhere = f"{cwhere}.ports.{j}"
            if isinstance(port.get("name"), str) and port["name"] in port_names:
                out.append((f"{pwhere}.name", f"port name {port['name'][:80]!r} is used twice in the container"))
            port_names.add(port.get("name"))
            if "containerPort" in port and (why := names.port_number(port["containerPort"])):
                out.append((f"{pwhere}.containerPort", f"invalid containerPort {port['containerPort']!r}: {why}"))
            if "hostPort" in port and port["hostPort"] != 0 and (why := names.port_number(port["hostPort"])):
                out.append((f"{pwhere}.hostPort", f"invalid hostPort {port['hostPort']!r}: {why}"))
            if isinstance(port.get("name"), str) and (why := names.port_name(port["name"])):
                out.append((f"{pwhere}.name", f"invalid port name {port['name'][:80]!r}: {why}"))
        out += _resources(c.get("resources"), f"{cwhere}.resources")
    return out


def _volume_names(volumes: Any, where: str) -> list[tuple[str, str]]:
    """ValidateVolumes: each volume's name is a DNS-1123 label, used once in the pod."""
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for i, volume in enumerate(volumes[:MAX_NAME_CHECKS] if isinstance(volumes, list) else []):
        name = volume.get("name") if isinstance(volume, dict) else None
        if not isinstance(name, str):
            continue
        if why := names.dns1123_label(name):
            out.append((f"{where}.{i}.name", f"invalid volume name {name[:80]!r}: {why}"))
        elif name in seen:
            out.append((f"{where}.{i}.name", f"volume name {name!r} is used twice in the pod"))
        seen.add(name)
    return out


def _resources(resources: Any, where: str) -> list[tuple[str, str]]:
    if not isinstance(resources, dict):
        return []
    out, parsed = [], {}
    for section in ("limits", "requests"):
        values = resources.get(section)
        if not isinstance(values, dict):
            continue
        for resource, value in values.items():
            amount = quantity.parse(value)
            at = f"{where}.{section}.{resource}"
            if amount is None:
                out.append((at, f"invalid quantity {str(value)[:80]!r}: quantities must match {quantity.FORMAT}"))
            elif amount < 0:
                out.append((at, f"{value!r}: must be greater than or equal to 0"))
            else:
                parsed[(section, resource)] = (amount, value)
    for (section, resource), (amount, value) in parsed.items():
        limit = parsed.get(("limits", resource))
        if section == "requests" and limit is not None and amount > limit[0]:
            out.append((f"{where}.requests.{resource}", f"{value!r}: must be less than or equal to "
                        f"{resource} limit of {limit[1]!r}"))
    return out
