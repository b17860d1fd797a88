"""A yes/no answer to "is this object (or values file) valid against its schema?", compiled once per schema.

jsonschema walks a schema anew for every instance (resolving each `$ref`, building an error tree), which was the
largest share of grpo-lint's cost per manifest. Most instances are valid, so they are first checked by a predicate
compiled from the schema into nested closures; only one it rejects goes through jsonschema, which then gives the
errors and their messages as before. A refusal is therefore always safe; only a pass must be exact.

The predicate is exact for the keywords the bundled Kubernetes schemas, the KubeRay CRD and the chart's values
schema use (type, properties, patternProperties, additionalProperties, propertyNames, required, items, enum and
const of scalars, oneOf, anyOf, allOf, not, if/then/else, `$ref`, pattern, the length, item-count, property-count
and numeric bounds, exclusive ones too; annotations, `$defs`, `x-` extensions and `format`, which jsonschema does
not assert without a format checker, are ignored). A schema whose top uses any other assertion is not
compiled (`compile_schema` returns None) and its instances all go to jsonschema: a keyword this module does not know can
never make an invalid instance pass. A property's schema is compiled when an instance first has the property,
and one with such an assertion refuses the instances that have it.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from functools import cached_property
from typing import Any

Check = Callable[[Any], bool]

# Keywords that assert nothing (jsonschema without a format checker ignores `format`).
_ANNOTATIONS = frozenset({"description", "format", "$schema", "$id", "title", "default", "example", "examples",
                          "deprecated", "readOnly", "writeOnly", "discriminator", "fields-to-discriminateBy",
                          "$defs", "$comment",  # definitions assert nothing where they sit: `$ref` reaches them
                          "nullable"})  # OpenAPI's, in CRD schemas: no JSON Schema keyword, so jsonschema ignores it
_ASSERTIONS = frozenset({"type", "properties", "patternProperties", "additionalProperties", "propertyNames",
                         "required", "items", "enum", "const", "oneOf", "anyOf", "allOf", "not", "if", "then", "else",
                         "$ref", "pattern", "minLength", "maxLength", "minItems", "maxItems", "minProperties",
                         "maxProperties", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})


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
    assertion outside the compiled set at its top. A property's schema is compiled when an instance first has
    that property (most of a Kubernetes schema's properties never occur in one manifest set): one that uses an
    assertion outside the set refuses every instance that has the property, so jsonschema decides those."""
    try:
        return _Compiler(resolve).compile(schema)
    except Unsupported:
        return None


def _refuse(_v: Any) -> bool:
    return False


class _Compiler:
    def __init__(self, resolve: Callable[[str], Any]):
        self.resolve = resolve
        self.refs: dict[str, Check] = {}
        self.lock = threading.RLock()

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
        checks = [c for c in (self._type(schema), self._object(schema), self._names(schema), self._items(schema),
                              self._enum(schema), self._const(schema), self._one_of(schema), self._any_of(schema),
                              self._all_of(schema), self._not(schema), self._if(schema), self._ref(schema),
                              *self._bounds(schema)) if c is not None]
        return _every(checks)

    def _type(self, schema: dict) -> Check | None:
        if "type" not in schema:
            return None
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not names or any(n not in _TYPES for n in names):
            raise Unsupported(f"type {names}")
        tests = [_TYPES[n] for n in names]
        if len(tests) == 2:
            first, second = tests
            return lambda v: first(v) or second(v)
        return tests[0] if len(tests) == 1 else (lambda v: any(t(v) for t in tests))

    def _object(self, schema: dict) -> Check | None:
        props = schema.get("properties", {})
        patterns = schema.get("patternProperties", {})
        extra = schema.get("additionalProperties", True)
        required = schema.get("required", [])
        if not isinstance(props, dict) or not isinstance(patterns, dict) or not isinstance(required, list):
            raise Unsupported("properties/patternProperties/required")
        if not props and not patterns and extra is True and not required:
            return None
        compiled: dict[str, Check] = {}  # filled as instances show each property (compile_schema)
        by_pattern = [(_search(p), self.compile(v)) for p, v in patterns.items()]
        other = None if extra is True else self.compile(extra)

        def check(v: Any) -> bool:
            if not isinstance(v, dict):
                return True
            for key in required:
                if key not in v:
                    return False
            for key, value in v.items():
                test = compiled.get(key)
                if test is None and key in props:
                    test = compiled[key] = self._deferred(props[key])
                if test is not None and not test(value):
                    return False
                if by_pattern and not isinstance(key, str):
                    return False  # not matched by a pattern in jsonschema either (it raises): let it decide
                matched = False
                for found, pattern_test in by_pattern:  # jsonschema: a key may match several, and a property too
                    if found(key) is not None:
                        matched = True
                        if not pattern_test(value):
                            return False
                if test is None and not matched and other is not None and not other(value):
                    return False
            return True

        return check

    def _deferred(self, schema: Any) -> Check:
        """A property's check, compiled at its first instance (under a lock: rules run on several threads);
        refusing all where it uses an assertion outside the set."""
        with self.lock:
            try:
                return self.compile(schema)
            except Unsupported:
                return _refuse

    def _names(self, schema: dict) -> Check | None:
        if "propertyNames" not in schema:
            return None
        name = self.compile(schema["propertyNames"])
        return lambda v: not isinstance(v, dict) or all(name(k) for k in v)

    def _items(self, schema: dict) -> Check | None:
        if "items" not in schema:
            return None
        if not isinstance(schema["items"], (dict, bool)):
            raise Unsupported("items as a list")
        item = self.compile(schema["items"])

        def check(v: Any) -> bool:
            if isinstance(v, list):
                for x in v:
                    if not item(x):
                        return False
            return True

        return check

    def _enum(self, schema: dict) -> Check | None:
        if "enum" not in schema:
            return None
        if not isinstance(schema["enum"], list):
            raise Unsupported("enum")
        options = [_equals(x) for x in schema["enum"]]
        return lambda v: any(o(v) for o in options)

    def _const(self, schema: dict) -> Check | None:
        return _equals(schema["const"]) if "const" in schema else None

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

    def _all_of(self, schema: dict) -> Check | None:
        if "allOf" not in schema:
            return None
        parts = [self.compile(s) for s in schema["allOf"]]
        return lambda v: all(p(v) for p in parts)

    def _not(self, schema: dict) -> Check | None:
        if "not" not in schema:
            return None
        inner = self.compile(schema["not"])
        return lambda v: not inner(v)

    def _if(self, schema: dict) -> Check | None:
        if "if" not in schema:  # then and else alone assert nothing
            return None
        condition = self.compile(schema["if"])
        then = self.compile(schema.get("then", True))
        otherwise = self.compile(schema.get("else", True))
        return lambda v: then(v) if condition(v) else otherwise(v)

    def _bounds(self, schema: dict) -> list[Check]:
        """pattern (re.search, as jsonschema), string lengths, item counts and numeric bounds, each applying to its
        own type only."""
        out: list[Check] = []
        if "pattern" in schema:
            found = _search(schema["pattern"])
            out.append(lambda v: not isinstance(v, str) or found(v) is not None)
        number = _TYPES["number"]
        for key, kind, size, below in (("minLength", str, len, False), ("maxLength", str, len, True),
                                       ("minItems", list, len, False), ("maxItems", list, len, True),
                                       ("minProperties", dict, len, False), ("maxProperties", dict, len, True)):
            if key in schema:
                out.append(_bound(schema[key], lambda v, k=kind: isinstance(v, k), size, below))
        for key, below in (("minimum", False), ("maximum", True)):
            if key in schema:
                out.append(_bound(schema[key], number, lambda v: v, below))
        for key, below in (("exclusiveMinimum", False), ("exclusiveMaximum", True)):
            if key in schema:
                out.append(_bound(schema[key], number, lambda v: v, below, exclusive=True))
        return out

    def _ref(self, schema: dict) -> Check | None:
        if "$ref" not in schema:
            return None
        ref = schema["$ref"]
        if ref not in self.refs:
            slot: list[Check] = []
            self.refs[ref] = lambda v: slot[0](v)  # a recursive definition calls itself through the slot
            try:
                slot.append(self.compile(self.resolve(ref)))
            except Unsupported:
                del self.refs[ref]  # no half-made entry for a later, deferred compile to find
                raise
            self.refs[ref] = slot[0]  # later references call it directly; recursive ones keep the slot
        return self.refs[ref]


def _every(checks: list[Check]) -> Check:
    """All of `checks` (the usual one to three without a generator per call)."""
    if not checks:
        return lambda _v: True
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda v: first(v) and second(v)
    if len(checks) == 3:
        first, second, third = checks
        return lambda v: first(v) and second(v) and third(v)
    return lambda v: all(c(v) for c in checks)


def _bound(limit: Any, applies: Check, measure: Callable[[Any], Any], upper: bool, exclusive: bool = False) -> Check:
    if not _TYPES["number"](limit):
        raise Unsupported(f"bound {limit!r}")
    if upper:
        if exclusive:
            return lambda v: not applies(v) or measure(v) < limit
        return lambda v: not applies(v) or measure(v) <= limit
    if exclusive:
        return lambda v: not applies(v) or measure(v) > limit
    return lambda v: not applies(v) or measure(v) >= limit


def _search(pattern: Any) -> Callable[[str], Any]:
    """re.search of a pattern, as jsonschema applies `pattern` and `patternProperties`."""
    try:
        return re.compile(pattern).search
    except (re.error, TypeError):  # e.g. an inline flag mid-pattern: jsonschema decides, per instance
        raise Unsupported(f"pattern {pattern!r}") from None


def _equals(target: Any) -> Check:
    """jsonschema's equality with one scalar of an enum or const: numbers by value (1 == 1.0), never a bool for a
    number or a number for a bool, strings and null as themselves. A list or mapping is left to jsonschema."""
    if target is None:
        return lambda v: v is None
    if isinstance(target, bool):
        return lambda v: isinstance(v, bool) and v is target
    if isinstance(target, str):
        return lambda v: isinstance(v, str) and v == target
    if _TYPES["number"](target):
        return lambda v: _TYPES["number"](v) and v == target
    raise Unsupported(f"enum or const {target!r}"[:60])


class SchemaCheck:
    """A schema, its compiled check and the jsonschema validator that gives its errors. The validator (and
    jsonschema with it, about a tenth of a cold lint's start-up) is built only when an instance is refused."""

    def __init__(self, schema: Any, resolve: Callable[[str], Any], make_validator: Callable[[Any], Any]):
        self.schema = schema
        self._resolve, self._make_validator = resolve, make_validator

    @cached_property
    def fast(self) -> Check | None:
        """The compiled predicate; None where the schema's top uses an assertion this module does not compile."""
        return compile_schema(self.schema, self._resolve)

    @cached_property
    def validator(self) -> Any:
        return self._make_validator(self.schema)

    def iter_errors(self, instance: Any) -> Iterator[Any]:
        """jsonschema's errors of `instance`; none, without building the validator, when the compiled check
        passes it."""
        if self.fast is not None and self.fast(instance):
            return iter(())
        return self.validator.iter_errors(instance)
