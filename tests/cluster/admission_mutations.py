"""Mutations of rendered objects for the object-validation oracle: each class names what it breaks (or keeps
valid at the edge), and where. Generated over every applicable place of every rendered object, then sampled
with a fixed seed. Valid edge cases are here on purpose: the API server must admit what grpo-lint passes."""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from grpo_stack.apivalidation.podspecs import find_pod_specs
from grpo_stack.lint.context import node_at


@dataclass(frozen=True)
class Mutation:
    cls: str  # the class in the agreement table, e.g. "label value > 63 chars"
    path: str  # dotted path of the changed field
    obj: dict[str, Any]


# Maps whose keys hold dots and slashes (label keys, resource names): the rest of a path after one is one key.
KEYED_MAPS = ("labels", "annotations", "matchLabels", "requests", "limits", "selector")


def split_path(path: str) -> list[str]:
    parts = path.split(".")
    for i, part in enumerate(parts[:-1]):
        if part in KEYED_MAPS and not (part == "selector" and parts[i + 1] in ("matchLabels", "matchExpressions")):
            return parts[:i + 1] + [".".join(parts[i + 1:])]
    return parts


DELETE = object()  # a mutation's value that removes the field


def set_at(obj: dict, path: str, value: Any) -> None:
    """Set the field at a dotted path (`DELETE`: remove it), creating missing maps on the way."""
    node: Any = obj
    parts = split_path(path)
    for part in parts[:-1]:
        if isinstance(node, list):
            node = node[int(part)]
            continue
        if node.get(part) is None:  # create missing maps on the way (labels, securityContext, requests)
            node[part] = {}
        node = node[part]
    if value is DELETE:
        node.pop(parts[-1])
    elif isinstance(node, list):
        node[int(parts[-1])] = value
    else:
        node[parts[-1]] = value


def _containers(obj: dict) -> Iterator[str]:
    for pod_path, spec in find_pod_specs(obj):
        for i, _ in enumerate(spec.get("containers") or []):
            yield f"{pod_path}.containers.{i}" if pod_path else f"containers.{i}"


def _meta_mutations(obj: dict) -> Iterator[tuple[str, str, Any]]:
    kind = obj.get("kind")
    yield "name with upper case", "metadata.name", "Grpo-Upper"
    yield "name with underscore", "metadata.name", "grpo_under"
    yield "name 254 chars", "metadata.name", "a" * 254
    yield "valid: name 63 chars", "metadata.name", "a" * 63
    yield "no metadata.name", "metadata.name", DELETE
    if kind == "Service":
        yield "Service name starts with a digit", "metadata.name", "1grpo"
        yield "Service name 64 chars", "metadata.name", "a" * 64
    if kind in ("ConfigMap", "NetworkPolicy"):
        yield "valid: dotted name", "metadata.name", "grpo.stack.config"
    yield "label value 64 chars", "metadata.labels.grpo-oracle", "v" * 64
    yield "valid: label value 63 chars", "metadata.labels.grpo-oracle", "v" * 63
    yield "label value with a space", "metadata.labels.grpo-oracle", "bad value"
    yield "label value starts with a dash", "metadata.labels.grpo-oracle", "-lead"
    yield "valid: empty label value", "metadata.labels.grpo-oracle", ""
    yield "label key with a space", "metadata.labels.bad key", "x"
    yield "label key prefix not DNS", "metadata.labels.Bad_Prefix/x", "x"
    yield "valid: prefixed label key", "metadata.labels.grpo-stack.io/oracle", "x"
    yield "annotation key with a space", "metadata.annotations.bad key", "x"


def _template_mutations(obj: dict) -> Iterator[tuple[str, str, Any]]:
    """Pod-level fields of every embedded pod template (a workload's, a RayCluster group's)."""
    for pod_path, spec in find_pod_specs(obj):
        if pod_path.endswith(".spec"):
            meta = pod_path.rpartition(".")[0] + ".metadata"
            yield "template label value with a space", f"{meta}.labels.grpo-oracle", "bad value"
            yield "valid: template label value 63 chars", f"{meta}.labels.grpo-oracle", "v" * 63
            yield "template annotation key with a space", f"{meta}.annotations.bad key", "x"
        containers = spec.get("containers") or []
        if len(containers) > 1:
            yield "container name duplicated", f"{pod_path}.containers.1.name", containers[0].get("name")
        else:
            yield "container name duplicated", f"{pod_path}.containers", containers + [
                {**containers[0], "ports": [], "volumeMounts": []}]
        for i, volume in enumerate(spec.get("volumes") or []):
            yield "volume name with upper case", f"{pod_path}.volumes.{i}", {**volume, "name": "Data_Volume"}
        if spec.get("volumes"):
            yield "volume name duplicated", f"{pod_path}.volumes", spec["volumes"] + [spec["volumes"][0]]


def _container_mutations(obj: dict, c: str) -> Iterator[tuple[str, str, Any]]:
    container = node_at(obj, c) or {}
    yield "container name with upper case", f"{c}.name", "Main_Container"
    yield "image empty", f"{c}.image", ""
    yield "imagePullPolicy not an enum value", f"{c}.imagePullPolicy", "Sometimes"
    yield "env name with '='", f"{c}.env", [{"name": "A=B", "value": "x"}]
    yield "valid: env name with a dot", f"{c}.env", [{"name": "a.b", "value": "x"}]
    for i, _ in enumerate(container.get("ports") or []):
        yield "containerPort 0", f"{c}.ports.{i}.containerPort", 0
        yield "containerPort 65536", f"{c}.ports.{i}.containerPort", 65536
        yield "valid: containerPort 65535", f"{c}.ports.{i}.containerPort", 65535
        yield "port name 16 chars", f"{c}.ports.{i}.name", "this-is-too-long"
        yield "port name upper case", f"{c}.ports.{i}.name", "HTTP"
        yield "port protocol not an enum value", f"{c}.ports.{i}.protocol", "HTTP"
    res = container.get("resources") or {}
    for part in ("requests", "limits"):
        for name in (res.get(part) or {}):
            yield f"{name} quantity not a number", f"{c}.resources.{part}.{name}", "1.5.5"
            yield f"{name} quantity negative", f"{c}.resources.{part}.{name}", "-1"
            yield "valid: quantity in exponent form", f"{c}.resources.{part}.{name}", _exponent(res[part][name])
            yield f"{name} quantity unknown suffix", f"{c}.resources.{part}.{name}", "1Gb"
    if (res.get("limits") or {}).get("cpu"):
        yield "cpu request above its limit", f"{c}.resources.requests.cpu", "100000"
    for name in ("nvidia.com/gpu", "vpc.amazonaws.com/efa"):
        if name in (res.get("limits") or {}):
            yield "extended resource fractional", f"{c}.resources.limits.{name}", "0.5"
            yield "extended resource request != limit", f"{c}.resources.requests.{name}", "1"
    for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
        p = container.get(probe) or {}
        if isinstance((p.get("httpGet") or {}).get("port"), int):
            yield "probe port 0", f"{c}.{probe}.httpGet.port", 0
        if p:
            yield "probe timeoutSeconds negative", f"{c}.{probe}.timeoutSeconds", -1
    if container.get("volumeMounts"):
        yield "volumeMount names no volume", f"{c}.volumeMounts.0.name", "no-such-volume"
    yield "runAsUser negative", f"{c}.securityContext.runAsUser", -1


def _exponent(value: Any) -> str:
    """The same quantity written with a decimal exponent and a decimal point (`160` -> `1.6E+2`): equal, so
    requests and limits still agree. The point makes it a float to every YAML reader, so the dump quotes it: an
    unquoted `4E+0` is a number to kubectl's go-yaml but a string to YAML 1.1, and grpo-lint refuses that
    ambiguity as input (tests/lint/test_manifest_yaml_reader.py), which is not what this class asks."""
    from grpo_stack.preflight.plan import quantity

    sign, digits, exponent = quantity(value).normalize().as_tuple()
    mantissa = f"{digits[0]}.{''.join(map(str, digits[1:])) or '0'}"
    return f"{'-' if sign else ''}{mantissa}E{exponent + len(digits) - 1:+d}"


def _kind_mutations(obj: dict) -> Iterator[tuple[str, str, Any]]:
    kind, spec = obj.get("kind"), obj.get("spec") or {}
    if kind in ("Deployment", "StatefulSet") and (spec.get("selector") or {}).get("matchLabels"):
        key = sorted(spec["selector"]["matchLabels"])[0]
        yield "selector no longer matches its template", f"spec.selector.matchLabels.{key}", "other"
        yield "selector operator not an enum value", "spec.selector.matchExpressions", [
            {"key": "a", "operator": "Near", "values": ["b"]}]
        yield "replicas negative", "spec.replicas", -1
    if kind == "Service":
        for i, _ in enumerate(spec.get("ports") or []):
            yield "Service port 0", f"spec.ports.{i}.port", 0
            yield "Service port 70000", f"spec.ports.{i}.port", 70000
            yield "Service targetPort name invalid", f"spec.ports.{i}.targetPort", "x_y"
            yield "nodePort on a ClusterIP Service", f"spec.ports.{i}.nodePort", 30080
        yield "Service selector value invalid", "spec.selector.grpo-oracle", "bad value"
        ports = spec.get("ports") or []
        if ports:
            second = {**ports[0], "name": ports[0].get("name") or "first", "port": 1}
            second.pop("nodePort", None)
            yield "Service port names duplicated", "spec.ports", [
                {**ports[0], "name": second["name"]}, second]
            unnamed = {k: v for k, v in second.items() if k != "name"}
            yield "Service with two ports, one unnamed", "spec.ports", [
                {**ports[0], "name": second["name"]}, unnamed]
    if kind == "NetworkPolicy":
        for direction, peer_key in (("ingress", "from"), ("egress", "to")):
            for i, rule in enumerate(spec.get(direction) or []):
                base = f"spec.{direction}.{i}.{peer_key}"
                yield "CIDR prefix /33", base, [{"ipBlock": {"cidr": "10.0.0.0/33"}}]
                yield "CIDR address not an IP", base, [{"ipBlock": {"cidr": "300.0.0.0/8"}}]
                yield "CIDR except outside the block", base, [{"ipBlock": {"cidr": "10.0.0.0/16",
                                                                           "except": ["192.168.0.0/24"]}}]
                yield "valid: CIDR with except inside", base, [{"ipBlock": {"cidr": "10.0.0.0/16",
                                                                            "except": ["10.0.1.0/24"]}}]
                for j, _ in enumerate(rule.get("ports") or []):
                    yield "NetworkPolicy port 0", f"spec.{direction}.{i}.ports.{j}.port", 0
                    yield "NetworkPolicy named port invalid", f"spec.{direction}.{i}.ports.{j}.port", "x_y"
                    yield "valid: NetworkPolicy named port", f"spec.{direction}.{i}.ports.{j}.port", "metrics"
                    yield "NetworkPolicy endPort below port", f"spec.{direction}.{i}.ports.{j}", {
                        "port": 8000, "endPort": 7999}
                    yield "NetworkPolicy endPort with a named port", f"spec.{direction}.{i}.ports.{j}", {
                        "port": "metrics", "endPort": 9000}
                    yield "valid: NetworkPolicy port range", f"spec.{direction}.{i}.ports.{j}", {
                        "port": 8000, "endPort": 8100}
                    yield "NetworkPolicy protocol not an enum value", f"spec.{direction}.{i}.ports.{j}.protocol", "ICMP"
        yield "podSelector label value invalid", "spec.podSelector.matchLabels", {"grpo-oracle": "bad value"}
        yield "policyTypes not an enum value", "spec.policyTypes", ["Ingress", "Sideways"]
        yield "policyTypes more than two", "spec.policyTypes", ["Ingress", "Egress", "Ingress"]
    if kind == "ConfigMap":
        yield "binaryData value not base64", "binaryData", {"blob": "not_base64!"}
        yield "binaryData value base64 without its padding", "binaryData", {"blob": "aGk"}
        yield "valid: binaryData base64 across lines", "binaryData", {"blob": "aGVsbG8g\nd29ybGQ="}
    if kind == "RayCluster":
        for i, _ in enumerate(spec.get("workerGroupSpecs") or []):
            yield "RayCluster replicas not an integer", f"spec.workerGroupSpecs.{i}.replicas", "two"
            yield "rayStartParams value not a string", f"spec.workerGroupSpecs.{i}.rayStartParams", {"num-cpus": 0}


GENERATORS: tuple[Callable[[dict], Iterator[tuple[str, str, Any]]], ...] = (
    _meta_mutations, _kind_mutations, _template_mutations)


def mutations(obj: dict[str, Any]) -> Iterator[Mutation]:
    """Every applicable mutation of the object, each on a fresh copy."""
    found = [m for generate in GENERATORS for m in generate(obj)]
    for c in _containers(obj):
        found += list(_container_mutations(obj, c))
    for cls, path, value in found:
        mutated = copy.deepcopy(obj)
        try:
            set_at(mutated, path, value)
        except (KeyError, IndexError, TypeError, ValueError):
            continue
        yield Mutation(cls, path, mutated)


def sample(objects: list[dict[str, Any]], count: int, seed: int = 20) -> list[tuple[int, Mutation]]:
    """(object index, mutation) pairs: every class at least once where it applies, the rest drawn at random."""
    rng = random.Random(seed)
    pool = [(i, m) for i, o in enumerate(objects) for m in mutations(o)]
    by_class: dict[str, list] = {}
    for item in pool:
        by_class.setdefault(item[1].cls, []).append(item)
    chosen = [rng.choice(items) for _, items in sorted(by_class.items())]
    rest = [p for p in pool if p not in chosen]
    chosen += rng.sample(rest, max(0, min(len(rest), count - len(chosen))))
    return chosen
