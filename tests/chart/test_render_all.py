"""Every object of every shipped values file is valid Kubernetes 1.33 (strict) and valid KubeRay v1.7.0."""

from __future__ import annotations

import json
import re
from functools import cache, lru_cache

import jsonschema
import pytest
from referencing import Registry, Resource

K8S_VERSION = "1.33.0"
SCHEMA_DIR = f"kubernetes-json-schema/v{K8S_VERSION}-local-strict"


@lru_cache(maxsize=1)
def _k8s_registry() -> Registry:
    from kubernetes_validate.utils import schema_contents

    definitions = schema_contents(f"{SCHEMA_DIR}/_definitions.json", K8S_VERSION)
    return Resource.from_contents(definitions) @ Registry()


@cache
def k8s_validator(api_version: str, kind: str) -> jsonschema.Draft202012Validator:
    """Cached validator for the bundled strict schema (kubernetes_validate.utils.validate's file naming)."""
    from kubernetes_validate.utils import schema_contents

    group_version = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    schema = schema_contents(f"{SCHEMA_DIR}/{kind.lower()}-{group_version}.json", K8S_VERSION)
    registry = Resource.from_contents(schema) @ _k8s_registry()
    return jsonschema.Draft202012Validator(schema, registry=registry)


def _closed(node):
    """additionalProperties: false wherever the CRD lists properties and does not preserve unknown fields."""
    if isinstance(node, dict):
        node = {k: _closed(v) for k, v in node.items()}
        if ("properties" in node and "additionalProperties" not in node
                and not node.get("x-kubernetes-preserve-unknown-fields")):
            node["additionalProperties"] = False
        return node
    if isinstance(node, list):
        return [_closed(v) for v in node]
    return node


@pytest.fixture(scope="session")
def raycluster_validator(raycluster_crd) -> jsonschema.Draft7Validator:
    schema = _closed(json.loads(raycluster_crd.read_text())["versions"]["v1"])
    return jsonschema.Draft7Validator(schema)


def _errors(validator, obj) -> list[str]:
    return sorted(f"{'.'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}" for e in validator.iter_errors(obj))


def test_every_object_is_valid_kubernetes_1_33(values_name, rendered_all):
    """A manifest the API server rejects (typo'd field, wrong type) fails at `helm install`, not in review."""
    problems = []
    for o in rendered_all[values_name].objects:
        api_version = o.obj.get("apiVersion", "")
        if api_version.startswith("ray.io/"):
            continue  # CRD: validated against the KubeRay schema below
        try:
            validator = k8s_validator(api_version, o.kind)
        except FileNotFoundError:
            problems.append(f"{o.kind}/{o.name}: no Kubernetes {K8S_VERSION} schema for {api_version}")
            continue
        problems += [f"{o.kind}/{o.name} ({o.template}) {msg}" for msg in _errors(validator, o.obj)]
    assert not problems, "\n".join(problems)


def test_every_raycluster_is_valid_kuberay_1_7(values_name, rendered_all, raycluster_validator):
    """KubeRay 1.7 must accept the RayCluster as rendered: an unknown field is silently dropped or rejected."""
    clusters = rendered_all[values_name].of_kind("RayCluster")
    assert clusters, "no RayCluster rendered"
    problems = [f"RayCluster/{o.name} {msg}" for o in clusters for msg in _errors(raycluster_validator, o.obj)]
    assert not problems, "\n".join(problems)
