"""A yes/no answer to "is this object valid against its bundled Kubernetes schema?", compiled once per schema.

jsonschema walks a schema anew for every object (resolving each `$ref`, building an error tree), which was the
largest share of grpo-lint's cost per manifest. Most objects are valid, so they are first checked by a predicate
compiled from the schema into nested closures; only an object it rejects goes through jsonschema, which then
gives the errors and their messages as before.

The predicate is exact for the keywords the bundled schemas and the KubeRay CRD use (type, properties,
additionalProperties, required, items, enum, oneOf, anyOf, `$ref`, pattern, the length, item-count and numeric
bounds; annotations, `x-` extensions and `format`, which jsonschema does not assert without a format checker, are
ignored). A schema with any other assertion is not compiled (`compile_schema` returns None) and its
objects all go to jsonschema: a keyword this module does not know can never make an invalid object pass.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

Check = Callable[[Any], bool]

# Keywords that assert nothing (jsonschema without a format checker ignores `format`).
_ANNOTATIONS = frozenset({"description", "format", "$schema", "$id", "title", "default", "example", "examples",
                          "deprecated", "readOnly", "writeOnly", "discriminator", "fields-to-discriminateBy",
                          "nullable"})  # OpenAPI's, in CRD schemas: no JSON Schema keyword, so jsonschema ignores it
_ASSERTIONS = frozenset({"type", "properties", "additionalProperties", "required", "items", "enum", "oneOf", "anyOf",
                         "$ref", "pattern", "minLength", "maxLength", "minItems", "maxItems", "minimum", "maximum"})


def _is_integer(v: Any) -> bool:  # jsonschema: an int, or a float with no fraction; never a bool
    return (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer())


_TYPES: dict[str, Check] = {
    "string": lambda v: isinstance(v, str),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "integer": _is_integer,
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
}


class Unsupported(Exception):
    """The schema uses an assertion this module does not compile."""


def compile_schema(schema: Any, resolve: Callable[[str], Any]) -> Check | None:
    """The predicate of `schema` (`resolve(ref)` gives the schema a `$ref` names), or None when the schema uses an
    assertion outside the compiled set."""
    try:
        return _Compiler(resolve).compile(schema)
    except Unsupported:
        return None


class _Compiler:
    def __init__(self, resolve: Callable[[str], Any]):
        self.resolve = resolve
        self.refs: dict[str, Check] = {}

    def compile(self, schema: Any) -> Check:
        if schema is True or schema == {}:
            return lambda _v: True
        if schema is False:
            return lambda _v: False
        if not isinstance(schema, dict):
            raise Unsupported(repr(schema)[:60])
        unknown = [k for k in schema if k not in _ASSERTIONS and k not in _ANNOTATIONS and not k.startswith("x-")]
        if unknown:
            raise Unsupported(unknown[0])
        checks = [c for c in (self._type(schema), self._object(schema), self._items(schema), self._enum(schema),
                              self._one_of(schema), self._any_of(schema), self._ref(schema), *self._bounds(schema))
                  if c is not None]
        if not checks:
            return lambda _v: True
        if len(checks) == 1:
            return checks[0]
        return lambda v: all(c(v) for c in checks)

    def _type(self, schema: dict) -> Check | None:
        if "type" not in schema:
            return None
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not names or any(n not in _TYPES for n in names):
            raise Unsupported(f"type {names}")
        tests = [_TYPES[n] for n in names]
        return tests[0] if len(tests) == 1 else (lambda v: any(t(v) for t in tests))

    def _object(self, schema: dict) -> Check | None:
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        required = schema.get("required", [])
        if not isinstance(props, dict) or not isinstance(required, list):
            raise Unsupported("properties/required")
        if not props and extra is True and not required:
            return None
        compiled = {k: self.compile(v) for k, v in props.items()}
        other = None if extra is True else self.compile(extra)

        def check(v: Any) -> bool:
            if not isinstance(v, dict):
                return True
            for key in required:
                if key not in v:
                    return False
            for key, value in v.items():
                test = compiled.get(key, other)
                if test is not None and not test(value):
                    return False
            return True

        return check

    def _items(self, schema: dict) -> Check | None:
        if "items" not in schema:
            return None
        if not isinstance(schema["items"], (dict, bool)):
            raise Unsupported("items as a list")
        item = self.compile(schema["items"])
        return lambda v: not isinstance(v, list) or all(item(x) for x in v)

    def _enum(self, schema: dict) -> Check | None:
        if "enum" not in schema:
            return None
        values = schema["enum"]
        if not isinstance(values, list) or not all(isinstance(x, str) or x is None for x in values):
            raise Unsupported("enum of other than strings")  # jsonschema's equality of numbers and bools differs
        strings = frozenset(x for x in values if isinstance(x, str))
        allow_null = None in values
        return lambda v: (isinstance(v, str) and v in strings) or (v is None and allow_null)

    def _one_of(self, schema: dict) -> Check | None:
        if "oneOf" not in schema:
            return None
        options = [self.compile(s) for s in schema["oneOf"]]
        return lambda v: sum(1 for o in options if o(v)) == 1

    def _any_of(self, schema: dict) -> Check | None:
        if "anyOf" not in schema:
            return None
        options = [self.compile(s) for s in schema["anyOf"]]
        return lambda v: any(o(v) for o in options)

    def _bounds(self, schema: dict) -> list[Check]:
        """pattern (re.search, as jsonschema), string lengths, item counts and numeric bounds, each applying to its
        own type only."""
        out: list[Check] = []
        if "pattern" in schema:
            try:
                found = re.compile(schema["pattern"]).search
            except (re.error, TypeError):  # e.g. an inline flag mid-pattern: jsonschema decides, per instance
                raise Unsupported(f"pattern {schema['pattern']!r}") from None
            out.append(lambda v: not isinstance(v, str) or found(v) is not None)
        number = _TYPES["number"]
        for key, kind, size, below in (("minLength", str, len, False), ("maxLength", str, len, True),
                                       ("minItems", list, len, False), ("maxItems", list, len, True)):
            if key in schema:
                out.append(_bound(schema[key], lambda v, k=kind: isinstance(v, k), size, below))
        for key, below in (("minimum", False), ("maximum", True)):
            if key in schema:
                out.append(_bound(schema[key], number, lambda v: v, below))
        return out

    def _ref(self, schema: dict) -> Check | None:
        if "$ref" not in schema:
            return None
        ref = schema["$ref"]
        if ref not in self.refs:
            slot: list[Check] = []
            self.refs[ref] = lambda v: slot[0](v)  # a recursive definition calls itself through the slot
            slot.append(self.compile(self.resolve(ref)))
        return self.refs[ref]


def _bound(limit: Any, applies: Check, measure: Callable[[Any], Any], upper: bool) -> Check:
    if not _TYPES["number"](limit):
        raise Unsupported(f"bound {limit!r}")
    if upper:
        return lambda v: not applies(v) or measure(v) <= limit
    return lambda v: not applies(v) or measure(v) >= limit
