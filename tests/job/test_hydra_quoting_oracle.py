"""Every override the verl builder writes, parsed by Hydra's own `OverridesParser` (hydra-core 1.3.8, the
version verl 0.9.1 runs) and read back through OmegaConf, and composed into verl's real config: the value verl
reads is the value the values file holds, never a sweep, a float, an interpolation or a parse error.

Where the check stops: the overrides are parsed and composed in the oracle venv on CPU (verl's config and
Hydra's parser as `main_ppo` uses them); the shell layer (`ray job submit` entrypoint) is `shlex.join`, which
Python's own `shlex.split` reverses.
"""

from __future__ import annotations

import copy
import os
import random
import shlex

import pytest
from grpo_stack.job import build
from grpo_stack.job.hydra import HydraValueError, override

from .cases import require_oracle

pytestmark = pytest.mark.oracle
HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(os.path.dirname(HERE), "oracle", "hydra_oracle_worker.py")
PROBE = {"HF_TOKEN": "hf_probe_that_must_not_appear"}
HOSTILE = ["run=2", "run (v2)", "it's", "café", "two\nlines", "a,b", "-1e309", "${oc.env:HF_TOKEN}", "1:30",
           "true", "null", "back\\", "\\${oc.env:HF_TOKEN}", "[x,y]", "{a:1}", " padded ", "10", "ünï cödé ✓",
           "tab\there", "$HOME", "a'b\"c", "${", "}"]
READ = ("trainer.experiment_name", "trainer.project_name", "actor_rollout_ref.model.target_modules")


@pytest.fixture(scope="module")
def hydra_oracle():
    client = require_oracle()
    with open(os.devnull, "w") as quiet, client.OracleProcess(WORKER, stderr=quiet) as proc:
        yield proc


def _plain(value):
    return list(map(_plain, value)) if isinstance(value, list | tuple) else value


def _spec(base_specs, text: str) -> dict:
    spec = copy.deepcopy(base_specs["qwen3-8b"])
    spec["job"]["trainer"].update(experiment=text, project=text)
    spec["job"]["lora"] = {"rank": 8, "alpha": 16, "targetModules": text}
    return spec


def test_hostile_names_read_back_unchanged(hydra_oracle, base_specs):
    """trainer.experiment/project and lora.targetModules set to Hydra-hostile strings: Hydra parses every
    override, none is a sweep, and verl's composed config holds the exact string (no token interpolated)."""
    cases, built_jobs = [], []
    for i, text in enumerate(HOSTILE):
        built = build(_spec(base_specs, text))
        argv = built.argv()
        assert shlex.split(shlex.join(argv)) == argv
        built_jobs.append((text, built))
        cases.append({"id": str(i), "overrides": argv[len(built.entrypoint):], "env": PROBE,
                      "config_name": built.entrypoint[-1].removeprefix("--config-name="), "read": list(READ)})
    problems = []
    for (text, built), result in zip(built_jobs, hydra_oracle.ask(cases), strict=True):
        for arg, parsed in zip(built.args, result["parsed"], strict=True):
            if "error" in parsed or parsed["sweep"] or parsed["value"] != _plain(arg.value):
                problems.append((text, arg.key, arg.value, parsed))
        composed = result["composed"] or {}
        want_targets = text.split(",") if "," in text else text
        if result["compose_error"] or composed.get("trainer.experiment_name") != text \
                or composed.get("trainer.project_name") != text \
                or composed.get("actor_rollout_ref.model.target_modules") != want_targets:
            problems.append((text, result["compose_error"], composed))
        assert PROBE["HF_TOKEN"] not in repr(result)
    assert not problems, problems[:5]


def test_every_shipped_job_reads_back_unchanged(hydra_oracle, base_specs):
    """Every override of every shipped verl job parses with Hydra's parser to the value the builder holds."""
    cases, jobs = [], []
    for name, spec in sorted(base_specs.items()):
        if spec["job"]["framework"] != "verl":
            continue
        built = build(spec)
        jobs.append(built)
        cases.append({"id": name, "overrides": built.argv()[len(built.entrypoint):]})
    assert jobs
    for built, result in zip(jobs, hydra_oracle.ask(cases), strict=True):
        for arg, parsed in zip(built.args, result["parsed"], strict=True):
            assert "error" not in parsed and not parsed["sweep"], (arg, parsed)
            assert parsed["value"] == _plain(arg.value), (arg, parsed)


def test_random_strings_read_back_unchanged(hydra_oracle):
    """Random strings over Hydra's and OmegaConf's special characters: each written form reads back exactly,
    or is refused by the writer (only OmegaConf's `???` marker is)."""
    alphabet = list("ab1 \\'\"$${}},=()é\n\t:[]-+.e/@#%!?*~`") + ["${", "\\${", "${oc.env:HF_TOKEN}", "-1e309", "nan"]
    rnd = random.Random(20)
    texts = ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 10))) for _ in range(4000)]
    written, kept = [], []
    for text in texts:
        try:
            written.append(override("k", text))
            kept.append(text)
        except HydraValueError:
            assert text == "???"
    results = hydra_oracle.ask([{"id": str(i), "overrides": [w], "env": PROBE} for i, w in enumerate(written)])
    bad = [(t, w, r["parsed"][0]) for t, w, r in zip(kept, written, results, strict=True)
           if r["parsed"][0].get("value") != t or r["parsed"][0].get("sweep")]
    assert not bad, bad[:5]
