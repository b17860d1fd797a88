"""Every run knob's verl key is real and accepted: each shipped verl file with every optional knob set (and
with an override) composes in verl 0.9.1's own config and passes its start-up validator. Prevents a mapping
to a key verl does not have (Hydra refuses it) or a value verl rejects at start-up."""

from __future__ import annotations

import copy
import os

import pytest
from grpo_stack.job import build

from .cases import require_oracle
from .test_overrides import ALL_KNOBS
from .test_verl_oracle import NO_VLLM, oracle_case

pytestmark = pytest.mark.oracle
VARIANTS = {
    "loss-kl": {},
    "reward-kl": {"kl": {"placement": "reward", "coef": 0.01, "estimator": "k1"}, "lora": None},
    "override": {"verl": None},  # filled per file below
}


@pytest.fixture(scope="module")
def verl_oracle():
    client = require_oracle()
    with open(os.devnull, "w") as quiet, client.OracleProcess(client.VERL_WORKER, stderr=quiet) as proc:
        yield proc


def test_all_knobs_compose_and_start(verl_oracle, base_specs):
    cases = []
    for name, spec in sorted(base_specs.items()):
        if spec["job"]["framework"] != "verl":
            continue
        for variant, change in VARIANTS.items():
            job = copy.deepcopy({**spec["job"], **ALL_KNOBS, **change})
            job.pop("resume")  # resume_path needs the directory to exist at start-up; composition is what counts
            if variant == "override":
                job["verl"] = {**spec["job"]["verl"], "overrides": {
                    "actor_rollout_ref.rollout.enforce_eager": True,
                    "actor_rollout_ref.rollout.engine_kwargs.vllm.max_num_partial_prefills": 2}}
            cases.append(oracle_case(f"{name}/{variant}", build({**spec, "job": job})))
    results = verl_oracle.ask(cases)
    bad = []
    for case, result in zip(cases, results, strict=True):
        if result.get("compose_error") or result.get("worker_error"):
            bad.append(f"{case['id']}: {result.get('compose_error') or result.get('worker_error')}")
        elif not result["startup"]["ok"] and not (result["startup"]["message"] or "").startswith(NO_VLLM):
            bad.append(f"{case['id']}: {result['startup']['message']}")
    assert not bad, "\n".join(bad)
