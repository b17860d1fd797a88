"""GRPO000 suppression-without-reason."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Finding, Hit, Severity

CODE = "GRPO000"
NAME = "suppression-without-reason"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "A `grpo-lint: disable=` comment or config entry gives no reason."
DOC = """## What it does
Reports every inline `# grpo-lint: disable=GRPOnnn` comment, and every `disable:` entry in the lint config,
that does not say why the finding is acceptable. The unexplained suppression does not take effect.

## Why is this bad?
A silenced check with no reason is indistinguishable from a forgotten one; the next reader cannot tell whether
the risk was judged or ignored.

## Example
```yaml
vllm:
  maxModelLen: 8192  # grpo-lint: disable=GRPO502
```
Use instead:
```yaml
vllm:
  maxModelLen: 8192  # grpo-lint: disable=GRPO502 eval uses 4k prompts only; truncation measured at 0.1 %
```

## Fix
Add the reason after the codes on the same line, or in the config entry's `reason`.
"""


def check(ctx) -> Iterator[Hit]:
    """Suppressions are applied by the engine, which calls findings_for(); nothing to see on the values."""
    return iter(())


def accepted(code: str, reason: str) -> bool:
    """A reason suppresses `code` when there is one and, for a rule that declares SUPPRESSION_REASON (a pattern
    its reason must match, e.g. a measured peak), when it matches."""
    from . import RULES

    pattern = getattr(RULES.get(code), "SUPPRESSION_REASON", None)
    return bool(reason) and (pattern is None or bool(pattern.search(reason)))


def _demanding(codes, reason: str) -> list[str]:
    from . import RULES

    return sorted(c for c in codes if reason and not accepted(c, reason) and hasattr(RULES.get(c), "SUPPRESSION_HINT"))


def findings_for(inline, config) -> list[Finding]:
    from . import RULES

    out = []
    for s in inline:
        if not s.reason:
            out.append(Finding(s.file, s.line, 1, CODE, NAME, SEVERITY, "",
                               f"disable={','.join(sorted(s.codes))} has no reason; it is ignored",
                               "add the reason after the codes: # grpo-lint: disable=GRPO123 <why>"))
        for code in _demanding(s.codes, s.reason):
            out.append(Finding(s.file, s.line, 1, CODE, NAME, SEVERITY, "",
                               f"disable={code}: the reason does not carry what {code} needs; it is ignored",
                               RULES[code].SUPPRESSION_HINT))
    for c in config:
        if not c.reason:
            out.append(Finding(".grpo-lint.yaml", 1, 1, CODE, NAME, SEVERITY, f"disable.{c.code}",
                               f"config disables {c.code} without a reason; it is ignored",
                               "give the entry a `reason:`"))
        for code in _demanding({c.code}, c.reason):
            out.append(Finding(".grpo-lint.yaml", 1, 1, CODE, NAME, SEVERITY, f"disable.{c.code}",
                               f"config disables {code} with a reason that does not carry what it needs; it is "
                               "ignored", RULES[code].SUPPRESSION_HINT))
    return out
