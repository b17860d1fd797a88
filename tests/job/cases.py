"""Generated job specs for the differential tiers: a shipped values file's job spec with fields replaced.

Cases are drawn by hypothesis (derandomized, so every run checks the same configurations) once, up front,
so that one oracle process can answer them all in one batch.
"""

from __future__ import annotations

import copy
import importlib.util
import os
import re
from pathlib import Path
from typing import Any

import pytest
from grpo_stack.catalog.models import MODELS
from grpo_stack.job import BuildError, build
from grpo_stack.lint.context import LintContext
from grpo_stack.lint.rules.batch import BATCH_MODULES
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

REPO_ROOT = Path(__file__).resolve().parents[2]
SKIP_ENV = "GRPO_SKIP_ORACLE"
SETUP = "make oracle"
SHEET_ID = re.compile(r"\[([A-Z]\d+):")


def oracle_client():
    """tests/oracle/client.py, loaded by path (stdlib only; the oracle tier owns it)."""
    spec = importlib.util.spec_from_file_location("grpo_oracle_client", REPO_ROOT / "tests" / "oracle" / "client.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def require_oracle():
    """Fail with the setup command when the oracle venv is missing; skip only on GRPO_SKIP_ORACLE=1."""
    if os.environ.get(SKIP_ENV) == "1":
        pytest.skip(f"{SKIP_ENV}=1: oracle tier skipped on request")
    client = oracle_client()
    if client.oracle_python() is None:
        pytest.fail(f"oracle venv missing at {client.oracle_venv()}: run `{SETUP}` "
                    f"(bash tests/oracle/setup_oracle_venv.sh), or set {SKIP_ENV}=1 to skip", pytrace=False)
    return client


def spec_with(spec: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(spec)
    for dotted, value in changes.items():
        node = out
        *parents, leaf = dotted.split(".")
        for part in parents:
            node = node[part]
        node[leaf] = value
    job = out.get("job", out)
    if job.get("backend") == "fsdp" and isinstance((job.get("verl") or {}).get("overrides"), dict):
        # A base's Megatron-only overrides (recompute settings) do not carry over to a case that switches it to
        # FSDP, as its parallel section does not: each case states what its backend takes.
        job["verl"]["overrides"] = {k: v for k, v in job["verl"]["overrides"].items() if ".megatron." not in k}
    return out


def lint(spec: dict[str, Any]) -> tuple[LintContext, list[tuple[str, Any]]]:
    """The context and (code, hit) of every batch rule, as the engine would run them on this job spec."""
    ctx = LintContext("values.yaml", "grpo", "grpo", [], job_spec=spec)
    try:
        ctx.built = build(spec)
    except BuildError as exc:
        ctx.build_error = exc
    return ctx, [(m.CODE, hit) for m in BATCH_MODULES for hit in m.check(ctx)]


def sheet_id(hit) -> str:
    m = SHEET_ID.search(hit.message)
    assert m, hit.message
    return m.group(1)


def draw(strategy, count: int) -> list:
    """`count` distinct values of `strategy`, the same ones on every run."""
    seen: dict[str, Any] = {}

    @settings(max_examples=count * 3, derandomize=True, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(value):
        if len(seen) < count:
            seen.setdefault(repr(value), value)

    collect()
    return list(seen.values())


VERL_BASES = ("qwen3-8b", "qwen3-30b", "qwen25-72b", "qwen3-235b")
POW2 = (1, 2, 4, 8)
LORA32 = {"rank": 32, "alpha": 64, "targetModules": "all-linear"}


@st.composite
def verl_changes(draw_):
    """Replacements for a verl job spec: model x backend x nodes x batch sizes x n x micro sizes x layout."""
    backend = draw_(st.sampled_from(("fsdp", "megatron")))
    model = draw_(st.sampled_from(sorted(MODELS)))
    n = draw_(st.sampled_from((1, 2, 4, 5, 8)))
    dynamic = draw_(st.integers(0, 4)) == 0  # one in five with dynamic batch size
    c = {
        "job.backend": backend,
        "job.model.preset": model,
        "cluster.nodes": draw_(st.sampled_from((1, 2, 3, 4, 6))),
        "job.rollout.samplesPerPrompt": n,
        "job.rollout.tensorParallel": draw_(st.sampled_from((1, 2, 4, 8, 16))),
        "job.verl.batch.trainBatchSize": draw_(st.sampled_from((16, 32, 64, 96, 100, 128, 192, 240, 256, 384))),
        "job.verl.batch.ppoMiniBatchSize": draw_(st.sampled_from((8, 16, 24, 32, 40, 48, 64, 128))),
        "job.verl.batch.useDynamicBsz": dynamic,
        "job.verl.useV1Trainer": draw_(st.booleans()),
        "job.lora": draw_(st.sampled_from((None, None, None, LORA32))),
    }
    if dynamic:
        c["job.verl.batch.ppoMaxTokenLenPerGpu"] = draw_(st.sampled_from((2048, 4096, 8192, 16384)))
    else:
        c["job.verl.batch.ppoMicroBatchSizePerGpu"] = draw_(st.sampled_from((1, 2, 3, 4, 8, 16)))
        c["job.verl.batch.logProbMicroBatchSizePerGpu"] = draw_(st.sampled_from((1, 2, 4, 6, 8, 16, 24)))
    if backend == "megatron":
        tp, pp = draw_(st.sampled_from(POW2)), draw_(st.sampled_from((1, 2, 3, 4)))
        moe = MODELS[model].is_moe
        # The megatron and fsdp parallel sections have different keys: each case states the whole section.
        c["job.parallel"] = {"tensor": tp, "pipeline": pp, "context": draw_(st.sampled_from((1, 1, 2))),
                             "expert": draw_(st.sampled_from((1, 2, 4, 8))) if moe else 1,
                             "expertTensor": 1 if moe else None, "sequenceParallel": tp > 1}
    else:
        c["job.parallel"] = {"ulysses": draw_(st.sampled_from((1, 1, 2, 4)))}
    return draw_(st.sampled_from(VERL_BASES)), c


MILES_BASES = ("miles-qwen3-4b", "miles-qwen3-30b-a3b")


@st.composite
def miles_changes(draw_):
    """Replacements for a miles job spec: model x nodes x placement x batch sizes x layout."""
    model = draw_(st.sampled_from(sorted(MODELS)))
    nodes = draw_(st.sampled_from((1, 2, 3, 4, 6)))
    colocate = draw_(st.booleans())
    moe = MODELS[model].is_moe
    dynamic = draw_(st.booleans())
    return draw_(st.sampled_from(MILES_BASES)), {
        "job.model.preset": model,
        "cluster.nodes": nodes,
        "job.miles.colocate": colocate,
        "job.miles.actorNodes": None if colocate else draw_(st.integers(1, nodes)),
        "job.rollout.tensorParallel": draw_(st.sampled_from((1, 2, 3, 4, 8, 16))),
        "job.rollout.samplesPerPrompt": draw_(st.sampled_from((4, 8, 16))),
        "job.miles.rolloutBatchSize": draw_(st.sampled_from((16, 32, 40, 64))),
        "job.miles.globalBatchSize": draw_(st.sampled_from((64, 96, 128, 250, 256, 512))),
        "job.miles.microBatchSize": draw_(st.sampled_from((1, 2, 4))),
        "job.miles.useDynamicBatchSize": dynamic,
        "job.miles.maxTokensPerGpu": draw_(st.sampled_from((4096, 9216, 16384))) if dynamic else None,
        "job.parallel.tensor": draw_(st.sampled_from((1, 2, 3, 4, 8))),
        "job.parallel.pipeline": draw_(st.sampled_from((1, 2, 3))),
        "job.parallel.context": draw_(st.sampled_from((1, 1, 2, 3))),
        "job.parallel.expert": draw_(st.sampled_from((1, 2, 4, 8))) if moe else 1,
        "job.parallel.expertTensor": 1 if moe else None,
    }
