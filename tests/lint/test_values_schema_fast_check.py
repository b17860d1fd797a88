"""The values schema's compiled check (grpo_stack.schemafast, as values.schema_violations runs it) agrees with
jsonschema on every values file it is asked about: values that pass have no jsonschema error, values it refuses
have at least one. Checked for the umbrella schema and each subchart's complete section, on the shipped values
files and every values fixture of the suite (over the 235B file, as tests/render/test_merge.py merges them),
coalesced by Helm's engine, and on mutations of each. That Helm itself refuses what grpo-lint's check refuses is
tests/render/test_helm_schema_agreement.py's."""

from __future__ import annotations

import random

import pytest
from grpo_stack import values
from grpo_stack.paths import SUBCHART_NAMES
from grpo_stack.render import merged_values

from ..render.test_merge import user_values
from .schema_mutations import mutations


def test_the_values_schemas_compile():
    """Left to jsonschema, the values check would be correct but import and walk it on every lint."""
    assert values.umbrella_validator().fast is not None
    assert all(values.complete_section_validator(name).fast is not None for name in SUBCHART_NAMES)


@pytest.fixture(scope="module")
def merged_cases() -> list[tuple[str, dict]]:
    """The shipped files and 24 of the suite's values fixtures (jsonschema takes ~10 ms a check: all of them
    would be a minute of the suite for fixtures that differ from the 235B file in a key or two)."""
    cases = user_values()
    shipped = [c for c in cases if "/" not in c[0]]
    fixtures = random.Random(20261205).sample([c for c in cases if "/" in c[0]], 24)
    out = []
    for name, user in shipped + fixtures:
        try:
            out.append((name, values.with_user_nulls(merged_values(user), user)))
        except Exception:  # noqa: BLE001 - a fixture Helm cannot coalesce has no merged values to check
            continue
    return out


def test_the_fast_check_agrees_with_jsonschema_on_values_and_their_mutations(merged_cases):
    rng = random.Random(20261205)
    checked = refused = 0
    for name, merged in merged_cases:
        for candidate in [merged, *mutations(merged, rng, count=3)]:
            for check, instance, _prefix in values.schema_checks(candidate):
                verdict = check.fast(instance)
                valid = next(iter(check.validator.iter_errors(instance)), None) is None
                assert verdict == valid, (name, check.schema.get("$ref"))
                checked += 1
                refused += not verdict
    assert len(merged_cases) >= 28 and refused > checked // 20, (len(merged_cases), checked, refused)
