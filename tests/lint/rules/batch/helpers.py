"""Helpers for batch-rule tests: job specs with fields replaced, and contexts built like the engine does."""

from __future__ import annotations

import copy
from typing import Any

from grpo_stack.job import BuildError, build
from grpo_stack.lint.context import LintContext
from grpo_stack.lint.rules.batch import BATCH_MODULES


def spec_with(spec: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """A copy of a job spec with dotted paths set (`job.verl.batch.trainBatchSize`, `cluster.nodes`)."""
    out = copy.deepcopy(spec)
    for dotted, value in changes.items():
        node = out
        *parents, leaf = dotted.split(".")
        for part in parents:
            node = node[part]
        node[leaf] = value
    return out


def context_for(spec: dict[str, Any]) -> LintContext:
    ctx = LintContext("values.yaml", "grpo", "grpo", [], job_spec=spec)
    try:
        ctx.built = build(spec)
    except BuildError as exc:
        ctx.build_error = exc
    return ctx


def batch_hits(spec: dict[str, Any]) -> list[tuple[str, Any]]:
    """(code, hit) for every batch rule on this job spec."""
    ctx = context_for(spec)
    return [(m.CODE, hit) for m in BATCH_MODULES for hit in m.check(ctx)]
