"""Batch rules stay silent where they do not apply: manifest-only lint, a job that did not build, the other
framework."""

from __future__ import annotations

from grpo_stack.lint.context import LintContext
from grpo_stack.lint.rules.batch import BATCH_MODULES

from tests.job.cases import lint, spec_with


def test_manifest_only_context_has_no_batch_findings():
    ctx = LintContext("manifests.yaml", "", "default", [])
    assert not [h for m in BATCH_MODULES for h in m.check(ctx)]


def test_unbuildable_job_has_no_batch_findings(base_specs):
    spec = spec_with(base_specs["qwen3-8b"], {"job.reward.kind": "service"})  # reward-service disabled
    ctx, hits = lint(spec)
    assert ctx.build_error is not None and not hits


def test_framework_specific_rules_stay_with_their_framework(base_specs):
    verl_only = {m.CODE for m in BATCH_MODULES if m.FRAMEWORK == "verl"}
    miles_only = {m.CODE for m in BATCH_MODULES if m.FRAMEWORK == "miles"}
    _, hits = lint(spec_with(base_specs["miles-qwen3-4b"], {"cluster.nodes": 3, "job.parallel.context": 3,
                                                            "job.miles.globalBatchSize": 250}))
    assert {c for c, _ in hits} & miles_only and not {c for c, _ in hits} & verl_only
    _, hits = lint(spec_with(base_specs["qwen25-72b"], {"job.verl.batch.trainBatchSize": 256}))
    assert {c for c, _ in hits} & verl_only and not {c for c, _ in hits} & miles_only
