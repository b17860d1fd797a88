"""Statements in the user docs that behaviour can contradict, each checked against the code that decides it: the
builder (what a run does), the generated schema (what values are accepted), the chart (what NOTES prints) and the
miles tier's own pin. A doc edit or a code change that makes them disagree fails here."""

from __future__ import annotations

import re
import typing

import pytest
from grpo_stack.job import build
from grpo_stack.paths import REPO_ROOT, VALUES_DIR
from grpo_stack.render import job_spec, merged_values, render
from grpo_stack.schema.components import SUBCHARTS, Global
from grpo_stack.values import load_values_file, schema_violations
from pydantic import BaseModel

from tests.conftest import with_overrides

DOCS = REPO_ROOT / "docs"


def _text(page: str) -> str:
    return " ".join((DOCS / page).read_text().split())


def _values(name: str) -> dict:
    return load_values_file(VALUES_DIR / f"{name}.yaml").data


def test_miles_resume_default_is_the_builders():
    """docs/miles.md names the mode a miles run gets without global.job.resume; the built command agrees."""
    claimed = re.search(r"without `global\.job\.resume` the run starts at step 0 \(mode `(\w+)`, the default",
                        _text("miles.md"))
    assert claimed, "docs/miles.md no longer states the resume default"
    values = _values("miles-qwen3-4b")
    values["global"]["job"].pop("resume", None)
    argv = build(job_spec(render(values))).argv()
    assert claimed.group(1) == "disable" and "--load" not in argv, argv
    auto = with_overrides(values, {"global.job.resume": {"mode": "auto"}})
    assert "--load" in build(job_spec(render(auto))).argv()


def test_miles_takes_one_train_file():
    """docs/data.md: under miles trainFiles holds exactly one file (the schema refuses a second); under verl every
    listed file is read, and NOTES says so for several (never that "miles reads only the first")."""
    assert "Under miles, `trainFiles` and `valFiles` hold exactly one file each" in _text("data.md")
    miles = _values("miles-qwen3-4b")
    first = miles["global"]["job"]["data"]["trainFiles"][0]
    two = with_overrides(miles, {"global.job.data.trainFiles": [first, "data/other.jsonl"]})
    found = schema_violations(merged_values(two))
    assert any(v.key_path.startswith("global.job.data.trainFiles") for v in found), [str(v) for v in found]
    verl = _values("qwen3-8b")
    files = [*verl["global"]["job"]["data"]["trainFiles"], "data/other.parquet"]
    notes = render(with_overrides(verl, {"global.job.data.trainFiles": files})).notes
    assert "verl reads every one" in notes and "miles" not in notes.split("trainFiles lists")[1][:200], notes


def _leaves(model: type[BaseModel], prefix: str) -> list[str]:
    out = []
    for name, field in model.model_fields.items():
        path = f"{prefix}.{name}"
        if path == "global.job":
            continue  # its own table, per framework
        args = () if typing.get_origin(field.annotation) in (list, dict) else typing.get_args(field.annotation)
        sub = next((a for a in (field.annotation, *args) if isinstance(a, type) and issubclass(a, BaseModel)), None)
        out += _leaves(sub, path) if sub else [path]
    return out


@pytest.mark.parametrize("section", ["global", *SUBCHARTS])
def test_values_reference_lists_every_key(section):
    """docs/values.md has a row for every key, keys of optional sections without a default included
    (global.secrets.tracking.name and .key)."""
    model = Global if section == "global" else SUBCHARTS[section]
    reference = (DOCS / "values.md").read_text()
    missing = [k for k in _leaves(model, section) if f"| `{k}` |" not in reference]
    assert not missing, missing
    if section == "global":
        assert "| `global.secrets.tracking.key` |" in reference


def test_miles_tier_pin_is_the_one_named():
    """docs/miles.md names the PyPI release the miles tier installs, and never says miles is not on PyPI."""
    pin = re.search(r'^MILES_PIN="([^"]+)"', (REPO_ROOT / "tests/miles/setup_miles_venv.sh").read_text(), re.M)
    assert pin
    text = _text("miles.md")
    assert f"`{pin.group(1)}`" in text
    assert not re.search(r"not on PyPI", text, re.IGNORECASE)
