"""Differential tier: grpo-lint's batch rules against verl 0.9.1's own validator and runtime helpers.

Each case is a shipped job spec with fields replaced; the builder's arguments are composed into verl's real
config (`--config-name` from the entrypoint) in the oracle venv. grpo-lint must give the same startup verdict
as `validate_config`, report every runtime failure verl's helpers raise (R1-R6, R9) and every RolloutConfig
failure (R12) as an error, and report no runtime error those helpers disprove.
"""

from __future__ import annotations

import os
import time
from collections import Counter

import pytest
from grpo_stack.job.args import format_hydra

from .cases import VERL_BASES, draw, lint, require_oracle, sheet_id, spec_with, verl_changes

pytestmark = pytest.mark.oracle
CASES = 500
# verl imports vLLM's LoRA helper only after every other startup check passed; the oracle venv has no vLLM.
NO_VLLM = "vllm version None not supported"
ORACLE_RUNTIME = ("R1", "R2", "R3", "R4", "R5", "R6", "R9")


def oracle_case(case_id: str, built) -> dict:
    config_name = built.entrypoint[-1].removeprefix("--config-name=")
    return {"id": case_id, "config_name": config_name,
            "overrides": [f"{a.key}={format_hydra(a.value)}" for a in built.args]}


@pytest.fixture(scope="module")
def verl_oracle():
    client = require_oracle()
    with open(os.devnull, "w") as quiet, client.OracleProcess(client.VERL_WORKER, stderr=quiet) as proc:
        yield proc


def compare(result: dict, hits) -> list[str]:
    """Disagreements between verl's verdicts and grpo-lint's errors for one case."""
    errors = {sheet_id(h) for _, h in hits if h.severity.value == "error"}
    out = []
    if result.get("worker_error") or result.get("compose_error"):
        return [f"oracle could not run the case: {result.get('compose_error') or result.get('worker_error')}"]
    startup = result["startup"]
    verl_fails = not startup["ok"] and not (startup["message"] or "").startswith(NO_VLLM)
    lint_fails = any(e.startswith("V") for e in errors)
    if verl_fails != lint_fails:
        out.append(f"startup: verl {startup['message']!r} vs grpo-lint {sorted(errors)}")
    if not result["rollout_config"]["ok"] and "R12" not in errors:
        out.append(f"R12: verl {result['rollout_config']['message']!r}, grpo-lint silent")
    failed = {c["check"] for c in result["runtime"] if c["ok"] is False}
    passed = {c["check"] for c in result["runtime"] if c["ok"] is True} - failed
    for check in sorted(failed - errors):
        out.append(f"{check}: verl fails, grpo-lint silent")
    for check in sorted((errors & passed) & set(ORACLE_RUNTIME)):
        out.append(f"{check}: grpo-lint error, verl's helper passes")
    return out


def test_verl_verdicts_match_grpo_lint(verl_oracle, base_specs):
    """Over >= 500 generated configurations grpo-lint agrees with verl on startup and runtime failures
    (the class of the reviewed `ppo_mini_batch_size` and qwen25-72b dp=3 crashes)."""
    changes = draw(verl_changes(), CASES)
    assert len(changes) >= 500
    cases, linted = [], []
    for i, (base, change) in enumerate(changes):
        spec = spec_with(base_specs[base], change)
        ctx, hits = lint(spec)
        assert ctx.built is not None, ctx.build_error
        cases.append(oracle_case(f"c{i}", ctx.built))
        linted.append((base, change, hits))
    start = time.monotonic()
    results = verl_oracle.ask(cases)
    elapsed = time.monotonic() - start
    stats, problems = Counter(), []
    for (base, change, hits), result in zip(linted, results, strict=True):
        found = compare(result, hits)
        stats["cases"] += 1
        stats["agree" if not found else "disagree"] += 1
        stats["verl startup errors"] += not result["startup"]["ok"]
        stats["verl runtime failures"] += any(c["ok"] is False for c in result["runtime"])
        problems += [f"{base} {change}: {p}" for p in found]
    print(f"\nverl oracle: {dict(stats)} in {elapsed:.0f}s")
    assert not problems, "\n".join(problems[:30])
    # The generator must reach both verdicts on both sides, or the agreement proves little.
    assert stats["verl startup errors"] > 50 and stats["verl runtime failures"] > 50, stats
    assert stats["cases"] - stats["verl startup errors"] > 100, stats


@pytest.mark.parametrize("name", VERL_BASES)
def test_emitted_overrides_compose(verl_oracle, base_specs, name):
    """Every override the builder emits for a shipped values file is a key verl's config knows."""
    ctx, _ = lint(base_specs[name])
    result = verl_oracle.ask_one(oracle_case(name, ctx.built))
    assert result["compose_error"] is None, result["compose_error"]
    assert result["worker_error"] is None, result["worker_error"]
