"""Values files: read with positions, merge as Helm does, validate against the generated schema."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache, cached_property, lru_cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from .errors import InputError
from .paths import CHART_DIR, SUBCHART_NAMES

# Alias expansion is bounded so an anchors/aliases bomb is an input error, not an out-of-memory kill.
MAX_NODES = 200_000
MAX_BYTES = 5 * 1024 * 1024


@dataclass
class ValuesFile:
    path: str
    data: dict[str, Any]  # plain Python values, as Helm's YAML 1.1 reader sees them
    text: str

    @cached_property
    def tree(self) -> CommentedMap:
        """ruamel round-trip tree with the line/column of every key; parsed only when a position is needed.
        ruamel reads YAML 1.2 and can refuse a scalar libyaml (1.1, like Helm) accepted; positions then fall back
        to the top of the file rather than failing the whole run."""
        try:
            tree = YAML(typ="rt").load(self.text)
        except Exception:  # noqa: BLE001 - any parse difference only costs precision of positions
            return CommentedMap()
        return tree if isinstance(tree, CommentedMap) else CommentedMap()

    def position(self, key_path: str) -> tuple[int, int]:
        """1-based (line, column) of the deepest key of `key_path` present in this file (1, 1 if none)."""
        node: Any = self.tree
        line, col = 1, 1
        for part in _split(key_path):
            if isinstance(node, CommentedMap) and part in node:
                line, col = node.lc.key(part)
                line, col = line + 1, col + 1
                node = node[part]
            elif isinstance(node, CommentedSeq) and isinstance(part, int) and part < len(node):
                line, col = node.lc.item(part)
                line, col = line + 1, col + 1
                node = node[part]
            else:
                break
        return line, col

    def has(self, key_path: str) -> bool:
        node: Any = self.data
        for part in _split(key_path):
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and isinstance(part, int) and part < len(node):
                node = node[part]
            else:
                return False
        return True


def _split(key_path: str) -> list[str | int]:
    return [int(p) if p.isdigit() else p for p in key_path.split(".") if p]


def to_plain(node: Any, budget: list[int], path: str, file: str) -> Any:
    """Plain Python values, refusing non-string keys, exotic scalars and more than MAX_NODES nodes."""
    budget[0] -= 1
    if budget[0] < 0:
        raise InputError(file, f"document expands to more than {MAX_NODES} nodes (anchor/alias bomb?)")
    if isinstance(node, dict):
        out = {}
        for k, v in node.items():
            if not isinstance(k, str):
                raise InputError(file, f"key {k!r} is not a string", key_path=path or None)
            out[k] = to_plain(v, budget, f"{path}.{k}" if path else k, file)
        return out
    if isinstance(node, list):
        return [to_plain(v, budget, f"{path}.{i}", file) for i, v in enumerate(node)]
    for plain in (bool, int, float, str):  # bool first: it is an int subclass
        if isinstance(node, plain):
            return plain(node)
    if node is None:
        return None
    raise InputError(file, f"unsupported YAML value of type {type(node).__name__}", key_path=path or None)


def load_values_file(path: str | Path) -> ValuesFile:
    name = str(path)
    p = Path(path)
    if p.is_dir():
        raise InputError(name, "is a directory, not a values file")
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise InputError(name, "no such file") from None
    except OSError as exc:
        raise InputError(name, f"cannot read: {exc.strerror}") from None
    if len(raw) > MAX_BYTES:
        raise InputError(name, f"larger than {MAX_BYTES // (1024 * 1024)} MiB; not a values file")
    if b"\0" in raw:
        raise InputError(name, "binary data (NUL byte); not a YAML values file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(name, f"not UTF-8 text (byte {exc.start})") from None
    try:
        docs = list(yaml.load_all(text, Loader=StrictLoader))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        line = mark.line + 1 if mark else None
        col = mark.column + 1 if mark else None
        raise InputError(name, f"invalid YAML: {problem}", line=line, column=col) from None
    except RecursionError:
        raise InputError(name, "invalid YAML: nesting too deep") from None
    docs = [d for d in docs if d is not None]
    if not docs:
        raise InputError(name, "empty values file")
    if len(docs) > 1:
        raise InputError(name, "more than one YAML document; a values file is a single mapping")
    top = docs[0]
    if not isinstance(top, dict):
        raise InputError(name, f"top level is a {_kind(top)}, expected a mapping of values", line=1, column=1)
    try:
        data = to_plain(top, [MAX_NODES], "", name)
    except RecursionError:
        raise InputError(name, "invalid YAML: nesting too deep") from None
    return ValuesFile(name, data, text)


class StrictLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """libyaml's safe loader (fast), refusing duplicate keys, which a plain safe load silently keeps last."""

    def construct_mapping(self, node, deep=False):
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.setdefault(key, key_node.start_mark.line + 1)
            except TypeError:  # unhashable key: reported as a non-string key later
                continue
            if first != key_node.start_mark.line + 1:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r} (first at line {first})", key_node.start_mark)
        return super().construct_mapping(node, deep=deep)


def _kind(node: Any) -> str:
    return {list: "list", str: "string", int: "number", float: "number", bool: "boolean"}.get(
        type(node), type(node).__name__
    ) if not isinstance(node, list) else "list"


def merge_user_values(files: list[ValuesFile]) -> dict[str, Any]:
    """`helm -f a -f b`: later files win, maps merge deeply, other values replace (Helm's MergeMaps)."""
    merged: dict[str, Any] = {}
    for f in files:
        merged = _merge_maps(merged, f.data)
    return merged


def _merge_maps(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out = dict(a)
    for k, v in b.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _merge_maps(out[k], v)
        else:
            out[k] = v
    return out


@dataclass(frozen=True)
class SchemaViolation:
    key_path: str
    message: str


@lru_cache(maxsize=1)
def umbrella_validator() -> jsonschema.Draft202012Validator:
    schema = json.loads((CHART_DIR / "values.schema.json").read_text())
    return jsonschema.Draft202012Validator(schema)


@cache
def complete_section_validator(name: str) -> jsonschema.Draft202012Validator:
    """A subchart section after coalescing must have every key: `$defs/<Model>Complete` of the generated
    umbrella schema (the typed model with `required`), resolved against the umbrella's definitions."""
    schema = umbrella_validator().schema
    ref = f"#/$defs/{_SECTION_MODELS[name]}Complete"
    return jsonschema.Draft202012Validator({"$defs": schema["$defs"], "$ref": ref})


_SECTION_MODELS = {"raycluster": "Raycluster", "sandbox-fusion": "SandboxFusion", "reward-service": "RewardService",
                   "fsx-utils": "FsxUtils", "vllm": "Vllm", "lm-eval": "LmEval"}


def schema_violations(merged: dict[str, Any]) -> list[SchemaViolation]:
    """Every violation of the umbrella schema, and of each coalesced subchart section, with the key path."""
    out = []
    for err in umbrella_validator().iter_errors(merged):
        for leaf in _leaves(err):
            out.append(SchemaViolation(".".join(str(p) for p in leaf.absolute_path), _message(leaf)))
    for name in SUBCHART_NAMES:
        section = {k: v for k, v in (merged.get(name) or {}).items() if k not in ("global", "grpo-common")}
        for err in complete_section_validator(name).iter_errors(section):
            for leaf in _leaves(err):
                path = ".".join([name, *(str(p) for p in leaf.absolute_path)])
                out.append(SchemaViolation(path, _message(leaf)))
    return sorted(set(out), key=lambda v: (v.key_path, v.message))


def _leaves(err: jsonschema.ValidationError):
    if err.context:
        # For anyOf/oneOf/allOf keep the branch that got deepest into the document.
        best = max(err.context, key=lambda e: len(e.absolute_path))
        yield from _leaves(best)
    else:
        yield err


def _message(err: jsonschema.ValidationError) -> str:
    # The typed model writes why a key does not apply (`x-grpo-reason`) and how to migrate (`x-grpo-hint`).
    reason = err.schema.get("x-grpo-reason") if isinstance(err.schema, dict) else None
    if reason:
        return reason.split(": ", 1)[-1]
    hint = err.schema.get("x-grpo-hint") if isinstance(err.schema, dict) else None
    if hint:
        return f"{_plain_message(err)}; {hint}"
    return _plain_message(err)


def _plain_message(err: jsonschema.ValidationError) -> str:
    if err.validator == "additionalProperties":
        extra = sorted(set(err.instance) - set(err.schema.get("properties", {})))
        return f"unknown key(s) {', '.join(extra)} (allowed: {', '.join(sorted(err.schema.get('properties', {})))})"
    if err.validator == "required":
        return err.message.replace("is a required property", "is required")
    if err.validator == "enum":
        return f"{err.instance!r} is not one of {', '.join(map(repr, err.validator_value))}"
    return err.message


def locate(files: list[ValuesFile], key_path: str, defaults: bool = True) -> tuple[str, int, int]:
    """(file, line, column) of a values key: the last user file that sets it, else (with `defaults`) the chart
    default that provides it, else the deepest ancestor the user wrote."""
    for f in reversed(files):
        if f.has(key_path):
            return (f.path, *f.position(key_path))
    default = _default_position(key_path) if defaults else None
    if default:
        return default
    last = files[-1]
    return (last.path, *last.position(key_path))


@cache
def _chart_defaults(path: Path) -> ValuesFile:
    return load_values_file(path)


def _default_position(key_path: str) -> tuple[str, int, int] | None:
    from .paths import REPO_ROOT, SUBCHART_DIR

    head, _, rest = key_path.partition(".")
    if head == "global":
        path, sub = CHART_DIR / "values.yaml", key_path
    elif (SUBCHART_DIR / head / "values.yaml").exists() and rest:
        path, sub = SUBCHART_DIR / head / "values.yaml", rest
    else:
        return None
    vf = _chart_defaults(path)
    if not vf.has(sub):
        return None
    return (str(path.relative_to(REPO_ROOT)), *vf.position(sub))


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

    tree = yaml.load((CHART_DIR / "values.yaml").read_text(), Loader=FAST_LOADER) or {}
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

    walk(user, _default_tree(), "")
    return out
