"""The in-pod gate: grpo-lint's job rules over the job spec the Ray head mounts, before anything is submitted.

`helm install --set ...` and a hand-edited job ConfigMap never pass through grpo-lint; the in-pod submit
(grpo_stack.job.submit) runs this first. The rules are the registry's own modules (`lint.rules.JOB_RULES`, the
rules that read only the job spec), run on a context built as grpo-lint builds it (`lint.context.attach_job`), and
their findings are printed by grpo-lint's text formatter: the same code, the same finding text. Imports stdlib
only (the grpo_stack package is copied into the head pod; tests/recipes/test_job_gate.py runs it with nothing
else importable).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..job import BuildError, BuiltJob
from ..lint.context import LintContext, attach_job
from ..lint.finding import Finding, Severity
from ..lint.formatters.text import render
from ..lint.rules import JOB_RULES, finding


@dataclass
class GateResult:
    findings: list[Finding] = field(default_factory=list)
    built: BuiltJob | None = None
    build_error: BuildError | None = None  # the builder's refusal when no error finding explains it

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity is Severity.ERROR]

    def text(self) -> str:
        """grpo-lint's text output for these findings (empty when there are none)."""
        return render(self.findings, []) if self.findings else ""


def unknown_codes(codes: list[str] | tuple[str, ...]) -> list[str]:
    """The codes among `codes` that are not job rules (the gate cannot skip what it does not run)."""
    return [c for c in codes if c.upper() not in JOB_RULES]


def check(spec_data: dict[str, Any], file: str, skip: list[str] | tuple[str, ...] = ()) -> GateResult:
    """Run every job rule but `skip` over the job spec; findings are located at `file` (the mounted job.json),
    line 1: the key path they name is the values key, as grpo-lint prints it."""
    release = spec_data.get("release") if isinstance(spec_data.get("release"), dict) else {}
    ctx = LintContext(file, str(release.get("name", "")), str(release.get("namespace", "")), [])
    attach_job(ctx, spec_data)
    skipped = {c.upper() for c in skip}
    out = []
    for code, rule in JOB_RULES.items():
        if code in skipped:
            continue
        for hit in rule.check(ctx):
            out.append(finding(code, hit.severity or rule.SEVERITY, hit, file, 1, 1))
    result = GateResult(sorted(out), ctx.built)
    if ctx.build_error is not None and not result.errors:
        result.build_error = ctx.build_error
    return result
