"""GRPO102 component-missing."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity

CODE = "GRPO102"
NAME = "component-missing"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "The job or a component needs another component that the values leave disabled."
DOC = """## What it does
Checks that what the run uses is installed: `reward.kind: service` needs `global.components.rewardService`,
`reward.kind: sandbox` needs `sandboxFusion`, `reward.kind: external` needs `reward.url`, and lm-eval needs vLLM.

## Why is this bad?
A reward endpoint with no Service behind it fails every reward call after the cluster is up and the model is
loaded; an lm-eval Job with no vLLM burns its whole readiness budget before failing.

## Example
```yaml
global:
  components:
    sandboxFusion: false
  job:
    reward:
      kind: sandbox
```
Use instead:
```yaml
global:
  components:
    sandboxFusion: true
  job:
    reward:
      kind: sandbox
```

## Fix
Enable the component the job names, or change `global.job.reward.kind`.
"""

NEEDS = {"service": "rewardService", "sandbox": "sandboxFusion"}


def check(ctx) -> Iterator[Hit]:
    if not ctx.has_values:
        return
    kind = ctx.get("global.job.reward.kind")
    component = NEEDS.get(kind) if ctx.component_enabled("raycluster") else None  # no trainer, no reward calls
    if component and not ctx.component_enabled(component):
        yield Hit("global.job.reward.kind", f"reward.kind is {kind!r} but global.components.{component} is false",
                  remediation=f"set global.components.{component}: true", related=(f"global.components.{component}",))
    if kind == "external" and not ctx.get("global.job.reward.url"):
        yield Hit("global.job.reward.kind", "reward.kind is 'external' but global.job.reward.url is not set")
    if kind != "external" and ctx.get("global.job.reward.url"):
        yield Hit("global.job.reward.url", f"reward.url is only read when reward.kind is 'external' (it is {kind!r})",
                  remediation="remove global.job.reward.url or set reward.kind: external")
    if ctx.component_enabled("lmEval") and not ctx.component_enabled("vllm"):
        yield Hit("global.components.lmEval", "lm-eval is enabled but the vLLM server it evaluates is not",
                  remediation="set global.components.vllm: true", related=("global.components.vllm",))
