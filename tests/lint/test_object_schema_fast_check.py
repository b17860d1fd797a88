"""The compiled yes/no schema check (grpo_stack.schemafast) agrees with jsonschema on every object it is asked
about: an object it passes has no jsonschema error, an object it refuses has at least one. Checked for each
validator grpo-lint runs on an object (the object shape, the kind's bundled schema, a RayCluster's shape or the
KubeRay CRD, a monitoring CRD), on every manifest among the rule fixtures and on mutations of each (wrong types,
1.0 and True for integers, unknown keys, a required key removed, a word outside an enum, null items), which is
where a hand-compiled check would differ. The consumer here is jsonschema itself with the bundled Kubernetes 1.33
schemas; the API server's own validation is checked elsewhere (tests/controlplane)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import yaml
from grpo_stack import objectschema
from grpo_stack.kuberay_crd import shipped_path
from grpo_stack.schemafast import compile_schema

from .schema_mutations import mutations

FIXTURES = Path(__file__).parent / "rules" / "fixtures"
CRD = str(shipped_path())


def _objects() -> list[dict]:
    found = []
    for path in sorted(FIXTURES.glob("*/*.yaml")):
        try:
            docs = list(yaml.safe_load_all(path.read_text()))
        except yaml.YAMLError:
            continue
        for doc in docs:
            if isinstance(doc, dict) and isinstance(doc.get("kind"), str) and isinstance(doc.get("apiVersion"), str):
                found.append(doc)
    return found


def _validators(obj: dict) -> list:
    """What objectschema runs on an object: the shape, then its own schema (a RayCluster's with and without the
    KubeRay CRD)."""
    if not (isinstance(obj.get("kind"), str) and isinstance(obj.get("apiVersion"), str)):
        return [objectschema.shape_validator()]
    own = [objectschema.own_validator(obj, None), objectschema.own_validator(obj, CRD)]
    return [objectschema.shape_validator(), *{id(v): v for v in own if v is not None}.values()]


OBJECTS = _objects()


def test_the_fixtures_hold_objects_of_many_kinds():
    kinds = {o["kind"] for o in OBJECTS}
    assert len(OBJECTS) > 300 and {"Deployment", "Service", "Job", "Pod", "RayCluster", "ConfigMap"} <= kinds


KINDS = sorted({(o["kind"], o["apiVersion"]) for o in OBJECTS})


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_every_schema_the_fixtures_use_is_compiled(kind):
    """A schema left to jsonschema would be correct but slow: every one in use compiles, down to each property
    the fixture has (a property compiled at first use that fell back to jsonschema would refuse the valid
    fixture)."""
    obj = next(o for o in OBJECTS if (o["kind"], o["apiVersion"]) == kind)
    assert all(v.fast is not None and v.fast(obj) for v in _validators(obj))


def test_the_fast_check_agrees_with_jsonschema_on_objects_and_their_mutations():
    rng = random.Random(20261204)
    checked = refused = 0
    for obj in OBJECTS:
        for candidate in [obj, *mutations(obj, rng)]:
            for check in _validators(candidate):
                if check.fast is None:
                    continue
                verdict = check.fast(candidate)
                valid = next(iter(check.validator.iter_errors(candidate)), None) is None
                assert verdict == valid, (candidate.get("kind"), candidate.get("metadata"), check.schema.get("$id"))
                checked += 1
                refused += not verdict
    assert checked > 6000 and refused > checked // 5, (checked, refused)


def test_a_schema_with_an_assertion_it_does_not_compile_is_left_to_jsonschema():
    assert compile_schema({"type": "integer", "multipleOf": 2}, lambda ref: {}) is None
    assert compile_schema({"enum": [[1], {"a": 1}]}, lambda ref: {}) is None  # only scalars are compared here
    assert compile_schema({"type": "string", "maxLength": "8"}, lambda ref: {}) is None


def test_a_property_with_an_assertion_it_does_not_compile_refuses_only_instances_that_have_it():
    """Properties compile at first use: one outside the compiled set sends the instances that have it to jsonschema
    (a refusal is safe), and leaves the rest to the fast check."""
    calls = []
    check = compile_schema({"type": "object", "properties": {"a": {"$ref": "#/x"}, "b": {"type": "string"}}},
                           lambda ref: calls.append(ref) or {"uniqueItems": True})
    assert check is not None and calls == []  # nothing under `properties` compiled yet
    assert check({"b": "x"}) and not check({"b": 1})
    assert not check({"a": [1, 2]}) and not check({"a": [1, 2]}) and calls == ["#/x"]  # tried once, kept refused


def test_properties_compiled_at_first_use_agree_across_threads():
    """Rules run on several threads: a schema first used by many at once compiles each property once, and every
    thread gets the same answers as jsonschema."""
    from concurrent.futures import ThreadPoolExecutor

    schema = {"type": "object", "properties": {f"p{i}": {"$ref": f"#/d{i % 7}"} for i in range(200)}}
    defs = {f"#/d{j}": {"type": "integer", "minimum": j} for j in range(7)}
    check = compile_schema(schema, defs.__getitem__)
    good = {f"p{i}": i % 7 for i in range(200)}
    bad = {**good, "p13": -1}
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda k: check(good if k % 2 else bad), range(64)))
    assert answers == [bool(k % 2) for k in range(64)]


def test_bounds_and_patterns_apply_to_their_own_types_only():
    check = compile_schema({"anyOf": [{"type": "integer", "minimum": 1, "maximum": 8},
                                      {"type": "string", "pattern": "^[0-9]+%$", "maxLength": 4}]}, lambda ref: {})
    assert check(1) and check(8) and check(8.0) and check("50%")
    assert not check(0) and not check(9) and not check(True) and not check("100%x") and not check("1000%")


def test_a_recursive_definition_compiles_and_checks():
    node = {"type": "object", "properties": {"name": {"type": "string"}, "child": {"$ref": "#/node"}},
            "additionalProperties": False}
    check = compile_schema({"$ref": "#/node"}, lambda ref: node)
    assert check({"name": "a", "child": {"name": "b", "child": {"name": "c"}}})
    assert not check({"name": "a", "child": {"name": "b", "child": {"name": 3}}})
    assert not check({"name": "a", "child": {"other": 1}})
