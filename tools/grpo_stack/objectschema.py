"""Validate rendered objects: Kubernetes kinds with kubernetes-validate's bundled schemas, RayCluster with the
KubeRay CRD openAPIV3Schema, the Prometheus Operator's kinds with its CRDs (grpo_stack/monitoring/crds), the Kubeflow
training operators' jobs with theirs (grpo_stack/trainingcrds). Each
schema is a SchemaCheck, built once: its compiled check passes a valid object, and jsonschema (imported then)
reports every error of a refused one (iter_errors)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from .apivalidation.objects import custom_group
from .schemafast import SchemaCheck

KUBE_VERSION = "1.33.0"


@dataclass(frozen=True)
class ObjectError:
    path: str  # dotted path inside the object
    message: str
    structural: bool = False  # a wrong type: rules, which read objects by shape, must not see this object
    no_schema: bool = False  # the kind has no bundled schema: not an error in the object, reported once per kind


_KIND = re.compile(r"[A-Za-z][A-Za-z0-9]{0,62}")
_API_VERSION = re.compile(r"(?:[a-z0-9][a-z0-9.-]{0,252}/)?v[0-9][0-9a-z]{0,15}")


@lru_cache(maxsize=1)
def _schema_dir() -> Path:
    """kubernetes-validate's bundled strict schemas for KUBE_VERSION, found without importing the package (its
    __init__ imports jsonschema, which a lint of valid objects never needs)."""
    import importlib.util

    spec = importlib.util.find_spec("kubernetes_validate")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("kubernetes_validate")
    return Path(spec.submodule_search_locations[0]) / f"kubernetes-json-schema/v{KUBE_VERSION}-local-strict"


@lru_cache(maxsize=64)
def _kube_validator(kind: str, api_version: str) -> SchemaCheck | None:
    """The bundled strict schema for this kind, resolved the way kubernetes-validate does, built once."""
    if not (_KIND.fullmatch(kind) and _API_VERSION.fullmatch(api_version)):
        return None  # never a file name built from arbitrary text
    # rbac.authorization.k8s.io/v1 -> rbac-v1 ; apps/v1 -> apps-v1 ; v1 -> v1
    api = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    try:
        schema = json.loads((_schema_dir() / f"{kind.lower()}-{api}.json").read_text())
    except OSError:
        return None
    return SchemaCheck(schema, _definition, _kube_jsonschema)


def _kube_jsonschema(schema: dict[str, Any]) -> Any:
    import jsonschema
    from referencing import Registry, Resource

    registry = _definitions_resource() @ (Resource.from_contents(schema) @ Registry())
    return jsonschema.Draft202012Validator(schema, registry=registry)


def _draft7(schema: dict[str, Any]) -> Any:
    import jsonschema

    return jsonschema.Draft7Validator(schema)


def strict_crd_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """CRD schemas leave additionalProperties open; close every object that lists its properties. A required
    property with a `default` is not required of what a user writes: the API server fills the default in while
    decoding, before it validates (apiextensions structural defaulting; KubeRay's minReplicas and maxReplicas)."""
    if isinstance(schema, dict):
        out = {k: strict_crd_schema(v) for k, v in schema.items()}
        if "properties" in out and "additionalProperties" not in out and not out.get(
            "x-kubernetes-preserve-unknown-fields"
        ):
            out["additionalProperties"] = False
        props = out.get("properties")
        if isinstance(out.get("required"), list) and isinstance(props, dict):
            out["required"] = [k for k in out["required"]
                               if not (isinstance(props.get(k), dict) and "default" in props[k])]
        return out
    if isinstance(schema, list):
        return [strict_crd_schema(v) for v in schema]
    return schema


_DEFS = "/api/_definitions.json#/$defs/"


@lru_cache(maxsize=1)
def _definitions() -> dict[str, Any]:
    """The bundled `_definitions.json` (the largest schema file), parsed once for every kind."""
    return json.loads((_schema_dir() / "_definitions.json").read_text())


@lru_cache(maxsize=1)
def _definitions_resource() -> Any:
    from referencing import Resource

    return Resource.from_contents(_definitions())


def _shape_jsonschema(schema: dict[str, Any]) -> Any:
    import jsonschema
    from referencing import Registry

    return jsonschema.Draft202012Validator(schema, registry=_definitions_resource() @ Registry())


def _shape_validator(schema: dict[str, Any]) -> SchemaCheck:
    schema = {"$id": "https://kubernetes.io/api/grpo-stack-shape.json", **schema}
    return SchemaCheck(schema, _definition, _shape_jsonschema)


@lru_cache(maxsize=1)
def shape_validator() -> SchemaCheck:
    """What every Kubernetes object has (apiVersion, kind, metadata), checked first, before rules read it: kinds
    without a bundled schema too."""
    return _shape_validator({"type": "object", "required": ["apiVersion", "kind"], "properties": {
        "apiVersion": {"type": "string"}, "kind": {"type": "string"},
        "metadata": {"$ref": _DEFS + "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}}})


@lru_cache(maxsize=1)
def _raycluster_shape() -> SchemaCheck:
    """Without the KubeRay CRD a RayCluster is still checked where rules read it: its pod templates are
    Kubernetes PodTemplateSpecs."""
    template = {"$ref": _DEFS + "io.k8s.api.core.v1.PodTemplateSpec"}
    count = {"type": "integer"}
    group = {"type": "object", "properties": {
        "template": template, "groupName": {"type": "string"}, "replicas": count, "minReplicas": count,
        "maxReplicas": count, "numOfHosts": count, "serviceType": {"type": "string"},
        "rayStartParams": {"type": "object", "additionalProperties": {"type": "string"}}}}
    return _shape_validator({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "headGroupSpec": group, "workerGroupSpecs": {"type": "array", "items": group}}}}})


@lru_cache(maxsize=4)
def crd_validator(path: str) -> SchemaCheck:
    """The RayCluster v1 schema of a CRD file (a CustomResourceDefinition or its reduced form); a file that is
    not one is an InputError."""
    from .filereader import read_text
    from .kuberay_crd import MAX_CRD_BYTES, reduce_crd

    data = reduce_crd(read_text(path, max_bytes=MAX_CRD_BYTES).encode(), path)
    # Draft 7: a `$ref` ignores its siblings, which the compiled check does not, so references stay unresolved
    return SchemaCheck(strict_crd_schema(data["versions"]["v1"]), _unresolved, _draft7)


@lru_cache(maxsize=16)
def _shipped_crd_validator(kind: str, api_version: str) -> SchemaCheck | None:
    """The schema a CRD shipped in the package serves for the kind at that version: the Prometheus Operator's
    (monitoring/crds) or a Kubeflow training operator's (trainingcrds)."""
    from .monitoring.crds import schema as monitoring_schema
    from .trainingcrds import schema as training_schema

    found = monitoring_schema(kind, api_version) or training_schema(kind, api_version)
    return SchemaCheck(strict_crd_schema(found), _unresolved, _draft7) if found is not None else None


def is_raycluster(obj: dict[str, Any]) -> bool:
    return obj.get("kind") == "RayCluster" and str(obj.get("apiVersion", "")).startswith("ray.io/")


_MEMO: dict[tuple[str, str | None], list[ObjectError]] = {}
_MEMO_LIMIT = 4096


def forget_validated() -> None:
    """Drop the objects validated so far in this process (a benchmark's cold run starts without them)."""
    _MEMO.clear()


def validate_object(obj: Any, kuberay_crd: str | None) -> list[ObjectError]:
    """Schema errors of one object. Without `kuberay_crd` a RayCluster gets only the shape check (its pod
    templates as Kubernetes PodTemplateSpecs); the caller says so once. An object seen before in this process
    (values files rendering the same NetworkPolicy, ConfigMap, ...) is validated once."""
    try:
        key = (json.dumps(obj, sort_keys=True), kuberay_crd)
    except (TypeError, ValueError):
        return _validate(obj, kuberay_crd)
    if key not in _MEMO:
        if len(_MEMO) >= _MEMO_LIMIT:
            _MEMO.clear()
        _MEMO[key] = _validate(obj, kuberay_crd, key[0])
    return list(_MEMO[key])


# What the JSON text of an object must contain for a null list item (`[null`, `, null`: a mapping's value follows
# `": "`) or a placeholder (PLACEHOLDER's alternatives) to be in it; without it the walks below are skipped.
_NULL_ITEM_TEXT = ("[null", ", null")
_PLACEHOLDER_TEXT = ("$", "{{", "PLACEHOLDER", "<")


def _may_hold(text: str | None, needles: tuple[str, ...]) -> bool:
    return text is None or any(n in text for n in needles)


def _null_items(node: Any, path: str = "") -> list[ObjectError]:
    """A `null` list item: kubectl refuses it, and the bundled schemas (nullable everywhere) do not say so. The
    object is kept from the rules, which read list items as mappings."""
    out: list[ObjectError] = []
    if isinstance(node, dict):
        for k, v in node.items():
            out += _null_items(v, f"{path}.{k}" if path else str(k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            where = f"{path}.{i}" if path else str(i)
            out += [ObjectError(where, "a null list item", structural=True)] if v is None else _null_items(v, where)
    return out


def _validate(obj: Any, kuberay_crd: str | None, text: str | None = None) -> list[ObjectError]:
    """`text`: the object as JSON, when known (the walks for nulls and placeholders run only where it has them)."""
    shape = _errors(shape_validator(), obj) or (_null_items(obj) if _may_hold(text, _NULL_ITEM_TEXT) else [])
    if shape:
        return shape
    kind, api_version = obj["kind"], obj["apiVersion"]
    validator = own_validator(obj, kuberay_crd)
    if validator is None:
        from .errors import excerpt

        message = f"no Kubernetes {KUBE_VERSION} schema for {excerpt(api_version)} {excerpt(kind)}"
        unknown = not _kubernetes_api(kind, api_version) or _newer_than_bundled(kind, api_version)
        return [ObjectError("apiVersion", message, no_schema=unknown)]
    if is_raycluster(obj) or _kube_validator(kind, api_version) is None:  # a custom resource, read as its CRD reads it
        obj = _without_null_fields(obj, text)
    return _errors(validator, obj) or _api_errors(obj, text)


def _without_null_fields(node: Any, text: str | None = None) -> Any:
    """The object as a CRD's structural schema sees it: the API server prunes a field set to `null` that the schema
    does not mark nullable before it validates (apiextensions defaulting), so `env:` with no items is no field at all.
    None of the shipped CRDs marks a spec field nullable. A null list item stays (kubectl refuses it: _null_items)."""
    if text is not None and "null" not in text:
        return node
    if isinstance(node, dict):
        return {k: _without_null_fields(v) for k, v in node.items() if v is not None}
    if isinstance(node, list):
        return [_without_null_fields(v) for v in node]
    return node


def own_validator(obj: dict[str, Any], kuberay_crd: str | None) -> SchemaCheck | None:
    """The schema an object of a well-formed shape is checked against: a RayCluster's (the KubeRay CRD, or its pod
    templates' shape without one), the kind's bundled Kubernetes schema, a CRD shipped in the package; None for
    other kinds."""
    if is_raycluster(obj):
        return crd_validator(kuberay_crd) if kuberay_crd else _raycluster_shape()
    kind, api_version = obj["kind"], obj["apiVersion"]
    return _kube_validator(kind, api_version) or _shipped_crd_validator(kind, api_version)


def _api_errors(obj: dict[str, Any], text: str | None = None) -> list[ObjectError]:
    """What the API server refuses beyond the schema (apivalidation), once the shape is right."""
    from .apivalidation.objects import errors

    # A template linted before it was rendered: its placeholders are reported by their own rule (GRPO851).
    checked = _without_placeholders(obj) if _may_hold(text, _PLACEHOLDER_TEXT) else obj
    return [ObjectError(path, message) for path, message in errors(checked)]


def _without_placeholders(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _without_placeholders(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_without_placeholders(v) for v in node]
    if isinstance(node, str) and len(node) < 200 and PLACEHOLDER.fullmatch(node.strip()):
        return None
    return node


@lru_cache(maxsize=1)
def _bundled() -> tuple[frozenset[str], frozenset[str]]:
    """(kinds, api group-versions) that have a bundled schema, from the file names `<kind>-<api>.json`."""
    names = [n.removesuffix(".json").split("-", 1) for n in _bundled_names()]
    return frozenset(n[0] for n in names if len(n) == 2), frozenset(n[1] for n in names if len(n) == 2)


def _kubernetes_api(kind: str, api_version: str) -> bool:
    """True when a schema-less object claims a Kubernetes API group (core, `apps`, `*.k8s.io`) whose kind or
    version Kubernetes has: a removed apiVersion (`extensions/v1beta1 Deployment`) or a misspelt kind is an
    error. Any other group is a custom resource (JobSet, a Knative Service), which has no bundled schema."""
    if custom_group(api_version):
        return False
    kinds, apis = _bundled()
    api = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    return kind.lower() in kinds or api in apis


_VERSION = re.compile(r"v(\d+)(?:(alpha|beta)(\d+))?")
_STAGE = {"alpha": 0, "beta": 1, None: 2}


def _version_rank(version: str) -> tuple[int, int, int] | None:
    m = _VERSION.fullmatch(version)
    return (int(m.group(1)), _STAGE[m.group(2)], int(m.group(3) or 0)) if m else None


def _newer_than_bundled(kind: str, api_version: str) -> bool:
    """The kind is bundled in this API group only at pre-release versions lower than the object's: a later
    Kubernetes promoted it (`resource.k8s.io/v1` DRA objects, GA from 1.34), so it is not checked here rather than
    called wrong. A removed version (`autoscaling/v2beta2` where v2 is served) or a version past a GA one
    (`apps/v2`) stays an error."""
    group, _, version = api_version.rpartition("/")
    prefix = f"{kind.lower()}-{group.split('.', 1)[0]}-" if group else f"{kind.lower()}-"
    served = [_version_rank(n.removesuffix(".json").removeprefix(prefix)) for n in _bundled_names()
              if n.startswith(prefix)]
    mine = _version_rank(version)
    served = [r for r in served if r is not None]
    return mine is not None and bool(served) and all(mine > r and r[1] < _STAGE[None] for r in served)


@lru_cache(maxsize=1)
def _bundled_names() -> tuple[str, ...]:
    return tuple(n.name for n in _schema_dir().iterdir() if n.name.endswith(".json"))


# A whole value that is one envsubst / shell / Helm placeholder or a sed-style marker (`PLACEHOLDER_NUM_NODES`).
PLACEHOLDER = re.compile(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\{\{.*\}\}|[A-Z0-9_]*PLACEHOLDER[A-Z0-9_]*|<[A-Za-z_ -]+>")


def _wanted(e) -> str:
    if e.validator == "type":
        return e.validator_value if isinstance(e.validator_value, str) else " or ".join(e.validator_value)
    if e.validator == "pattern":
        return "a value of the field's format"
    kinds = [c.validator_value for c in e.context or () if c.validator == "type"]
    return " or ".join(k for k in kinds if isinstance(k, str)) or "another value"


def _definition(ref: str) -> Any:
    name = ref.partition("#/$defs/")[2]
    definitions = _definitions().get("$defs", {})
    if ref.split("#", 1)[0] not in ("", _DEFS.split("#", 1)[0]) or name not in definitions:
        return _unresolved(ref)
    return definitions[name]


def _unresolved(ref: str) -> Any:
    return {"$unresolved": ref}  # an assertion schemafast does not know: the schema is left to jsonschema


def _number_for_quantity(e: Any) -> bool:
    """A number where a CRD wants an int-or-string (a fractional CPU written `0.5`): the API server refuses the
    object, but the rules read quantities from numbers too, so the object is not kept from them."""
    return (isinstance(e.schema, dict) and e.schema.get("x-kubernetes-int-or-string") is True
            and isinstance(e.instance, int | float) and not isinstance(e.instance, bool))


def _errors(check: SchemaCheck, obj: Any) -> list[ObjectError]:
    from .errors import excerpt

    out = []
    for e in sorted(check.iter_errors(obj), key=lambda e: list(map(str, e.absolute_path))):
        typed = e.validator == "type" or any(c.validator == "type" for c in e.context or ())
        structural = typed and not _number_for_quantity(e)
        message = e.message if len(e.message) <= 300 else excerpt(e.message, 300)[1:-1]
        if _number_for_quantity(e):
            message = (f"{e.instance!r} is a YAML number where the CRD wants an integer or a string: the API server "
                       f"refuses it in a custom resource (a built-in Pod takes it); quote it: \"{e.instance}\"")
        if isinstance(e.instance, str) and PLACEHOLDER.fullmatch(e.instance.strip()):
            # A template linted before it was rendered: say so, rather than only "not of type 'integer'".
            message = (f"{excerpt(e.instance, 60)} is an unrendered template placeholder where the schema wants "
                       f"{_wanted(e)}; render the template (envsubst, helm template) and lint its output")
        out.append(ObjectError(".".join(str(p) for p in e.absolute_path), message, structural))
    return out
