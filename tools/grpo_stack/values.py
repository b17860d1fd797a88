"""Values files: read with positions, merge as Helm does, validate against the generated schema."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache, cached_property, lru_cache
from pathlib import Path
from typing import Any

import yaml

from .errors import InputError, excerpt
from .filereader import read_text
from .keyhints import key_hint, key_paths, value_hint
from .paths import SUBCHART_NAMES, chart_dir, subchart_dir
from .positions import PosMap
from .positions import load as load_positions
from .safeyaml import load_documents
from .schemafast import SchemaCheck


@dataclass
class ValuesFile:
    path: str
    data: dict[str, Any]  # plain Python values, as Helm's YAML 1.1 reader sees them
    text: str

    on_command_line = False  # a --set argument (helmvalues), not a file

    @cached_property
    def tree(self) -> PosMap:
        """The position tree (positions.py: libyaml, linear) with the line/column of every key; built only when a
        position is needed. A file it cannot read locates at the top rather than failing the run."""
        docs = load_positions(self.text)
        top = docs[0] if docs else None
        return top if isinstance(top, PosMap) else PosMap()

    def position(self, key_path: str) -> tuple[int, int]:
        """1-based (line, column) of the deepest key of `key_path` present in this file (1, 1 if none)."""
        node: Any = self.tree
        line, col = 1, 1
        for key in _keys(node, key_path)[0]:
            at = node.lc.key(key)
            if at is None:
                break
            line, col = at[0] + 1, at[1] + 1
            node = node[key]
        return line, col

    def has(self, key_path: str) -> bool:
        return _keys(self.data, key_path)[1]

    def merge_into(self, base: dict[str, Any]) -> dict[str, Any]:
        """This layer over `base`, as `helm -f` layers a file (a --set layer applies itself: helmvalues)."""
        return merge_maps(base, self.data)


def _keys(node: Any, key_path: str) -> tuple[list[str | int], bool]:
    """The keys along `key_path` from `node` as deep as the path is present, and whether all of it is. A mapping
    key may itself hold dots (`c7i.4xlarge`, `node.kubernetes.io/instance-type`): the shortest run of parts that is
    a key is taken."""
    parts = key_path.split(".")  # "" is the top-level empty key; the root itself has no key and stays at 1:1
    keys: list[str | int] = []
    i = 0
    while i < len(parts):
        key: str | int | None = None
        if isinstance(node, list):
            key = int(parts[i]) if parts[i].isdigit() and int(parts[i]) < len(node) else None
            used = 1
        elif isinstance(node, dict):
            # An empty part is an empty key (`"": 1`), located at itself, not at its parent.
            for used in range(1, len(parts) - i + 1):
                joined = ".".join(parts[i:i + used])
                if joined in node:
                    key = joined
                elif used == 1 and joined.isdigit() and int(joined) in node:  # a YAML integer key
                    key = int(joined)
                if key is not None:
                    break
        if key is None:
            return keys, False
        keys.append(key)
        node = node[key]
        i += used
    return keys, True


def release_file(files: list[ValuesFile]) -> ValuesFile:
    """The file a release is known by: the last values file given (a --set argument is not one), else the last
    layer. Findings that belong to no key are reported there."""
    return next((f for f in reversed(files) if not f.on_command_line), files[-1])


def as_values_file(layer: str | Path | ValuesFile) -> ValuesFile:
    """A layer of a release: a values file named by its path, or one already read (a --set argument)."""
    return layer if isinstance(layer, ValuesFile) else load_values_file(layer)


def load_values_file(path: str | Path) -> ValuesFile:
    """One values file: a single YAML mapping, read and converted by safeyaml's bounded, located rules."""
    name = str(path)
    text = read_text(path)
    docs = load_documents(text, name)
    if not docs:
        raise InputError(name, "empty values file")
    if len(docs) > 1:
        raise InputError(name, "more than one YAML document; a values file is a single mapping")
    top = docs[0]
    if not isinstance(top, dict):
        raise InputError(name, f"top level is a {_kind(top)}, expected a mapping of values", line=1, column=1)
    return ValuesFile(name, top, text)


def _kind(node: Any) -> str:
    return {list: "list", str: "string", int: "number", float: "number", bool: "boolean"}.get(
        type(node), type(node).__name__
    ) if not isinstance(node, list) else "list"


def merge_user_values(files: list[ValuesFile]) -> dict[str, Any]:
    """`helm -f a -f b --set …`: later files win, maps merge deeply, other values replace (Helm's MergeMaps); a
    --set layer is applied into the result. Raises InputError where a --set cannot be applied."""
    merged: dict[str, Any] = {}
    for f in files:
        merged = f.merge_into(merged)
    return merged


def merge_maps(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out = dict(a)
    for k, v in b.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = merge_maps(out[k], v)
        else:
            out[k] = v
    return out


@dataclass(frozen=True)
class SchemaViolation:
    key_path: str
    message: str
    # The one finding for its key: a null where the key takes none, or a value outside the key's own enum. Other
    # violations at the same key (a branch's narrower reason, an enum that a null also misses) say it twice.
    primary: int = field(default=0, compare=False)  # 2: a null where none is taken, 1: outside the own enum


@lru_cache(maxsize=1)
def umbrella_validator() -> SchemaCheck:
    """The umbrella chart's values schema: its compiled check first, jsonschema for a file it refuses."""
    schema = json.loads((chart_dir() / "values.schema.json").read_text())
    return SchemaCheck(schema, _local_definition(schema), _draft2020)


def _local_definition(schema: dict[str, Any]):
    definitions = schema.get("$defs", {})

    def resolve(ref: str) -> Any:
        name = ref.removeprefix("#/$defs/")
        if ref.startswith("#/$defs/") and name in definitions:
            return definitions[name]
        return {"$unresolved": ref}  # an assertion the compiled check does not know: jsonschema decides

    return resolve


def _draft2020(schema: dict[str, Any]) -> Any:
    import jsonschema  # only for values the compiled check refuses: a tenth of a cold lint's start-up

    return jsonschema.Draft202012Validator(schema)


@cache
def schema_key_paths() -> tuple[str, ...]:
    """Every key path the umbrella schema declares: where an unknown key may have been meant to go."""
    return key_paths(umbrella_validator().schema)


@cache
def complete_section_validator(name: str) -> SchemaCheck:
    """A subchart section after coalescing must have every key: `$defs/<Model>Complete` of the generated
    umbrella schema (the typed model with `required`), resolved against the umbrella's definitions."""
    schema = umbrella_validator().schema
    section = {"$defs": schema["$defs"], "$ref": f"#/$defs/{SECTION_MODELS[name]}Complete"}
    return SchemaCheck(section, _local_definition(section), _draft2020)


SECTION_MODELS = {"raycluster": "Raycluster", "sandbox-fusion": "SandboxFusion", "reward-service": "RewardService",
                   "fsx-utils": "FsxUtils", "vllm": "Vllm", "lm-eval": "LmEval"}


def with_user_nulls(merged: dict[str, Any], user: dict[str, Any]) -> dict[str, Any]:
    """The coalesced values as Helm's schema check sees them: a `null` the user wrote stays in place (coalescing
    drops it, Helm's render validates it and refuses `got null, want integer`). Without this, grpo-lint passed
    values `helm install` refuses (tests/render/test_helm_schema_agreement.py)."""
    nulls = list(_null_paths(user, ()))
    if not nulls:
        return merged
    out = copy.deepcopy(merged)
    for path in nulls:
        parent = out
        for key in path[:-1]:
            parent = parent.get(key) if isinstance(parent, dict) else None
        if isinstance(parent, dict):
            parent[path[-1]] = None
    return out


def _null_paths(node: Any, prefix: tuple) -> Iterator[tuple]:
    if isinstance(node, dict):
        for key, value in node.items():
            if value is None:
                yield (*prefix, key)
            else:
                yield from _null_paths(value, (*prefix, key))


def schema_checks(merged: dict[str, Any]) -> list[tuple[SchemaCheck, Any, list[str]]]:
    """(check, what it checks, the key path that sits at): the umbrella schema on the whole values, and each
    subchart's complete model on its coalesced section."""
    out: list[tuple[SchemaCheck, Any, list[str]]] = [(umbrella_validator(), merged, [])]
    for name in SUBCHART_NAMES:
        section = {k: v for k, v in (merged.get(name) or {}).items() if k not in ("global", "grpo-common")}
        out.append((complete_section_validator(name), section, [name]))
    return out


def schema_violations(merged: dict[str, Any]) -> list[SchemaViolation]:
    """Every violation of the umbrella schema, and of each coalesced subchart section, with the key path."""
    out = []
    for check, instance, prefix in schema_checks(merged):
        for err in check.iter_errors(instance):
            for leaf in _leaves(err):
                out += _violations([*prefix, *(str(p) for p in leaf.absolute_path)], leaf)
    best: dict[str, SchemaViolation] = {}
    for v in out:
        if v.primary > getattr(best.get(v.key_path), "primary", 0):
            best[v.key_path] = v
    out = [v for v in out if v.key_path not in best] + list(best.values())
    return sorted(set(out), key=lambda v: (v.key_path, v.message))


def _violations(path: list[str], err: Any) -> list[SchemaViolation]:
    """A missing key is reported at its own key path (where the user adds it), everything else where it is."""
    if err.validator == "required" and isinstance(err.instance, dict):
        missing = [k for k in err.validator_value if k not in err.instance]
        return [SchemaViolation(".".join([*path, k]), "is required") for k in missing]
    if err.validator == "additionalProperties" and isinstance(err.instance, dict) and err.validator_value is False:
        allowed = sorted(err.schema.get("properties", {}))
        extra = [k for k in err.instance if k not in allowed]
        if len(extra) <= 20:  # each unknown key at its own line; a flood of them is one error
            shown = ", ".join(allowed) if len(", ".join(allowed)) < 300 else f"{len(allowed)} keys, see docs/values.md"
            return [SchemaViolation(".".join([*path, k]), f"{EMPTY_KEY if k == '' else 'unknown key ('}"
                                    f"{key_hint(k, path, allowed, schema_key_paths()) if k else ''}allowed here: "
                                    f"{shown})") for k in extra]
    own_enum = err.validator == "enum" and not (isinstance(err.schema, dict) and "x-grpo-reason" in err.schema)
    primary = 2 if err.validator == "type" and err.instance is None else 1 if own_enum else 0
    return [SchemaViolation(".".join(path), _message(err), primary=primary)]


EMPTY_KEY = 'unknown key "" (a key with an empty name; '


def _leaves(err: Any):
    if err.context:
        # For anyOf/oneOf/allOf keep the branch that got deepest into the document.
        best = max(err.context, key=lambda e: len(e.absolute_path))
        yield from _leaves(best)
    else:
        yield err


def _message(err: Any) -> str:
    # The typed model writes why a key does not apply (`x-grpo-reason`) and how to migrate (`x-grpo-hint`).
    reason = err.schema.get("x-grpo-reason") if isinstance(err.schema, dict) else None
    if reason:
        return reason.split(": ", 1)[-1]
    hint = err.schema.get("x-grpo-hint") if isinstance(err.schema, dict) else None
    if hint:
        return f"{_plain_message(err)}; {hint}"
    if err.validator == "enum" and err.instance is None:
        return (f"null is not allowed here (want one of {', '.join(map(repr, err.validator_value))}); leave the key "
                "out to keep the chart's default")
    if err.validator == "type" and err.instance is None:
        want = err.validator_value if isinstance(err.validator_value, str) else " or ".join(err.validator_value)
        return f"null is not allowed here (want {want}); leave the key out to keep the chart's default"
    return _plain_message(err)


def _plain_message(err: Any) -> str:
    """jsonschema's message, with the offending value shown as a bounded excerpt (never the whole value)."""
    shown = excerpt(err.instance)
    if err.validator == "additionalProperties":
        extra = sorted(set(err.instance) - set(err.schema.get("properties", {})))
        allowed = ", ".join(sorted(err.schema.get("properties", {})))
        return f"unknown key(s) {excerpt(', '.join(extra), 200)} (allowed: {allowed})"
    if err.validator == "not":
        return f"{shown} is not allowed here"
    if err.validator == "enum":
        return (f"{shown} is not one of {', '.join(map(repr, err.validator_value))}"
                f"{value_hint(err.instance, err.validator_value)}")
    if err.validator == "type":
        return f"{shown} is not of type {excerpt(err.validator_value)}"
    if err.validator in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"):
        word = {"minimum": "less than the minimum of", "maximum": "greater than the maximum of",
                "exclusiveMinimum": "less than or equal to the minimum of",
                "exclusiveMaximum": "greater than or equal to the maximum of", "multipleOf": "not a multiple of"}
        return f"{shown} is {word[err.validator]} {err.validator_value}"
    if err.validator in ("pattern", "minLength", "maxLength", "const", "format"):
        return f"{shown} does not match the {err.validator} {excerpt(err.validator_value)}"
    return excerpt(err.message, 300)[1:-1]


def locate(files: list[ValuesFile], key_path: str, defaults: bool = True) -> tuple[str, int, int]:
    """(file, line, column) of a values key: the last user file that sets it, else (with `defaults`) the chart
    default that provides it, else the deepest ancestor the user wrote."""
    for f in reversed(files):
        if f.has(key_path):
            return (f.path, *f.position(key_path))
    default = _default_position(key_path) if defaults else None
    if default:
        return default
    last = release_file(files)
    return (last.path, *last.position(key_path))


@cache
def _chart_defaults(path: Path) -> ValuesFile:
    return load_values_file(path)


def _default_position(key_path: str) -> tuple[str, int, int] | None:
    head, _, rest = key_path.partition(".")
    if head == "global":
        path, sub = chart_dir() / "values.yaml", key_path
    elif (subchart_dir() / head / "values.yaml").exists() and rest:
        path, sub = subchart_dir() / head / "values.yaml", rest
    else:
        return None
    vf = _chart_defaults(path)
    if not vf.has(sub):
        return None
    # Shown as in the repository (charts/grpo-stack/...), wherever the chart was found.
    return (f"charts/{path.relative_to(chart_dir().parent)}", *vf.position(sub))


def violation_errors(files: list[ValuesFile], violations: list[SchemaViolation]) -> list[InputError]:
    out = []
    for v in violations:
        # The user's file is where a schema violation gets fixed, even when the bad value is a chart default.
        file, line, col = locate(files, v.key_path, defaults=False)
        out.append(InputError(file, v.message, line, col, key_path=v.key_path))
    return out


@lru_cache(maxsize=1)
def _default_tree() -> dict[str, Any]:
    from .render import FAST_LOADER, subchart_defaults

    tree = yaml.load((chart_dir() / "values.yaml").read_text(), Loader=FAST_LOADER) or {}
    for name in SUBCHART_NAMES:
        tree[name] = subchart_defaults(name)
    return tree


def shape_errors(files: list[ValuesFile], user: dict[str, Any]) -> list[InputError]:
    """Where the chart has a mapping, the user must give a mapping (or null): Helm's coalesce would otherwise
    fail with an unhelpful "type mismatch"."""
    out: list[InputError] = []

    def walk(node: dict[str, Any], defaults: dict[str, Any], prefix: str) -> None:
        for key, value in node.items():
            path = f"{prefix}.{key}" if prefix else key
            default = defaults.get(key)
            if isinstance(default, dict):
                if isinstance(value, dict):
                    walk(value, default, path)
                elif value is not None:
                    file, line, col = locate(files, path, defaults=False)
                    out.append(InputError(file, f"expected a mapping, got {_kind(value)}", line, col, key_path=path))

    for name in SUBCHART_NAMES:  # Helm cannot coalesce a subchart's section that is null ("type mismatch")
        if name in user and user[name] is None:
            file, line, col = locate(files, name, defaults=False)
            out.append(InputError(file, "null: Helm cannot merge a subchart's section that is null; leave the key "
                                  "out (or write {}) to keep the chart's defaults", line, col, key_path=name))
    walk(user, _default_tree(), "")
    return out
