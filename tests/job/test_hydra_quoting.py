"""Strings reach verl's Hydra command line so that Hydra reads back exactly what the values hold.

Unquoted, `run=2` or `café` makes Hydra refuse the command after the GPUs are allocated, `a,b` becomes a sweep,
`-1e309` a float and `${oc.env:HF_TOKEN}` an interpolation that puts the token into the tracker's run name.
These tests pin the written form; tests/job/test_hydra_quoting_oracle.py parses it with Hydra's own parser.
"""

from __future__ import annotations

import copy

import pytest
from grpo_stack.job import BuildError, build
from grpo_stack.job.hydra import HydraValueError, override, value_text

HOSTILE = ["run=2", "run (v2)", "it's", "café", "two\nlines", "a,b", "-1e309", "${oc.env:HF_TOKEN}", "1:30",
           "true", "NULL", "nan", "back\\", "\\${x}", "[x]", "{a:1}", "", " padded ", "10"]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_strings_are_quoted(text):
    written = value_text(text)
    assert written.startswith("'") and written.endswith("'"), written


def test_interpolation_is_escaped():
    assert value_text("${oc.env:HF_TOKEN}") == "'\\${oc.env:HF_TOKEN}'"
    assert value_text("it's") == "'it\\'s'"
    assert value_text("back\\") == "'back\\\\'"


def test_plain_strings_and_scalars_stay_readable():
    assert value_text("/fsx/data/train.parquet") == "/fsx/data/train.parquet"
    assert value_text("grpo") == "grpo"
    assert value_text(True) == "true" and value_text(None) == "null" and value_text(3) == "3"
    assert value_text(1e-06) == "1e-06"
    assert value_text(["q_proj", "v,proj"]) == "[q_proj,'v,proj']"


def test_what_hydra_cannot_express_is_refused():
    with pytest.raises(HydraValueError, match="missing value"):
        value_text("???")
    with pytest.raises(HydraValueError, match="map key"):
        value_text({"a b": 1})
    with pytest.raises(HydraValueError, match="key Hydra can address"):
        override("a b", 1)


def _verl_spec(base_specs, **trainer):
    spec = copy.deepcopy(base_specs["qwen3-8b"])
    spec["job"]["trainer"].update(trainer)
    return spec


def _arg(built, key):
    prefix = key + "="
    return next(a for a in built.argv() if a.startswith(prefix))


@pytest.mark.parametrize("text", HOSTILE[:8])
def test_trainer_names_reach_argv_quoted(base_specs, text):
    built = build(_verl_spec(base_specs, experiment=text, project=text))
    assert _arg(built, "trainer.experiment_name") == "trainer.experiment_name=" + value_text(text)
    assert _arg(built, "trainer.project_name") == "trainer.project_name=" + value_text(text)


def test_override_string_values_are_quoted(base_specs):
    spec = copy.deepcopy(base_specs["qwen3-8b"])
    spec["job"].setdefault("verl", {})["overrides"] = {"trainer.val_before_train": "a,b"}
    assert "trainer.val_before_train='a,b'" in build(spec).argv()


def test_unexpressible_value_is_refused_at_its_key(base_specs):
    with pytest.raises(BuildError, match=r"^global\.job\.trainer\.experiment: .*missing value"):
        build(_verl_spec(base_specs, experiment="???"))
