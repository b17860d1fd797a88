"""Validate rendered objects: Kubernetes kinds with kubernetes-validate's bundled schemas, RayCluster with the
KubeRay CRD openAPIV3Schema. Validators are built once and report every error (iter_errors)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonschema
from referencing import Registry, Resource

KUBE_VERSION = "1.33.0"


@dataclass(frozen=True)
class ObjectError:
    path: str  # dotted path inside the object
    message: str


@lru_cache(maxsize=64)
def _kube_validator(kind: str, api_version: str) -> jsonschema.Draft202012Validator | None:
    """The bundled strict schema for this kind, resolved the way kubernetes-validate does, built once."""
    import kubernetes_validate.utils as kvu

    schema_dir = f"kubernetes-json-schema/v{KUBE_VERSION}-local-strict"
    # rbac.authorization.k8s.io/v1 -> rbac-v1 ; apps/v1 -> apps-v1 ; v1 -> v1
    api = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    try:
        schema = kvu.schema_contents(f"{schema_dir}/{kind.lower()}-{api}.json", KUBE_VERSION)
    except FileNotFoundError:
        return None
    defs = kvu.schema_contents(f"{schema_dir}/_definitions.json", KUBE_VERSION)
    registry = Resource.from_contents(defs) @ (Resource.from_contents(schema) @ Registry())
    return jsonschema.Draft202012Validator(schema, registry=registry)


def strict_crd_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """CRD schemas leave additionalProperties open; close every object that lists its properties."""
    if isinstance(schema, dict):
        out = {k: strict_crd_schema(v) for k, v in schema.items()}
        if "properties" in out and "additionalProperties" not in out and not out.get(
            "x-kubernetes-preserve-unknown-fields"
        ):
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [strict_crd_schema(v) for v in schema]
    return schema


@lru_cache(maxsize=4)
def _crd_validator(path: str) -> jsonschema.Draft7Validator:
    data = json.loads(Path(path).read_text())
    schema = data["versions"]["v1"] if "versions" in data else data
    return jsonschema.Draft7Validator(strict_crd_schema(schema))


def validate_object(obj: dict[str, Any], kuberay_crd: str | None) -> list[ObjectError]:
    kind, api_version = obj.get("kind", ""), obj.get("apiVersion", "")
    if kind == "RayCluster" and api_version.startswith("ray.io/"):
        if not kuberay_crd:
            return []
        validator = _crd_validator(kuberay_crd)
    else:
        validator = _kube_validator(kind, api_version)
        if validator is None:
            return [ObjectError("apiVersion", f"no Kubernetes {KUBE_VERSION} schema for {api_version} {kind}")]
    return [
        ObjectError(".".join(str(p) for p in e.absolute_path), e.message)
        for e in sorted(validator.iter_errors(obj), key=lambda e: list(map(str, e.absolute_path)))
    ]
