"""Each keyword the compiled check knows, against jsonschema's own verdict (Draft 2020-12) on instances at its
edges: a bound itself and either side of it, 1 / 1.0 / True for numbers and booleans, keys a pattern matches or
not, a condition met or not. A difference here would let an invalid object or values file pass unchecked."""

from __future__ import annotations

import jsonschema
import pytest
from grpo_stack.schemafast import compile_schema

INSTANCES = [None, True, False, 0, 1, 1.0, 1.5, -1, 2, 3, "", "a", "ab", "1", "abc", [], [1], [1, 2, 3], {},
             {"a": 1}, {"a": "x"}, {"b": 1}, {"a": 1, "b": 2}, {"ab": 1}, {"x-y": 1}, {"ab": "s", "c": 1}]

SCHEMAS = {
    "const string": {"const": "a"},
    "const number": {"const": 1},
    "const true": {"const": True},
    "const null": {"const": None},
    "enum mixed": {"enum": [1, "a", None, False]},
    "exclusive bounds": {"exclusiveMinimum": 0, "exclusiveMaximum": 2},
    "inclusive bounds": {"minimum": 0, "maximum": 2},
    "property count": {"minProperties": 1, "maxProperties": 1},
    "not": {"not": {"type": "integer"}},
    "allOf": {"allOf": [{"type": "integer"}, {"minimum": 1}]},
    "if then else": {"if": {"type": "object", "required": ["a"]}, "then": {"properties": {"a": {"type": "integer"}}},
                     "else": {"type": "object", "maxProperties": 0}},
    "if then": {"if": {"type": "string"}, "then": {"minLength": 2}},
    "then alone": {"then": {"type": "string"}},
    "propertyNames": {"propertyNames": {"pattern": "^[a-z]+$", "maxLength": 1}},
    "patternProperties closed": {"patternProperties": {"^a": {"type": "integer"}, "b$": {"minimum": 2}},
                                 "additionalProperties": False},
    "patternProperties and properties": {"properties": {"ab": {"type": "string"}},
                                         "patternProperties": {"^a": {"type": "integer"}}},
    "pattern and extra schema": {"properties": {"a": {}}, "patternProperties": {"-": {}},
                                 "additionalProperties": {"type": "string"}},
}


@pytest.mark.parametrize("name", SCHEMAS)
def test_the_compiled_check_gives_jsonschemas_verdict(name):
    schema = SCHEMAS[name]
    check = compile_schema(schema, lambda ref: {})
    assert check is not None, name
    validator = jsonschema.Draft202012Validator(schema)
    differ = [i for i in INSTANCES if check(i) != validator.is_valid(i)]
    assert not differ, (name, differ)


def test_a_key_that_is_no_string_is_left_to_jsonschema_where_patterns_apply():
    check = compile_schema({"patternProperties": {"^a": {"type": "integer"}}}, lambda ref: {})
    assert not check({1: "x"})  # refused here: jsonschema decides (and gives the error)
