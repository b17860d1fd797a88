"""GRPO552 builtin-reward-on-code."""

from __future__ import annotations

import posixpath
from collections.abc import Iterator

from ..finding import Hit, Severity

CODE = "GRPO552"
NAME = "builtin-reward-on-code"
SEVERITY = Severity.ERROR
CATEGORY = "security"
SUMMARY = "reward.kind builtin scores a code dataset outside the sandbox (verl) or with a math scorer (miles)."
DOC = """## What it does
With `global.job.reward.kind: builtin`, finds every dataset of the run that `grpo-data` marks as code (its
adapter's `ability` is `code`: APPS, TACO, CodeContests and any code adapter added to the registry), wherever the
values name it:
- `fsx-utils.data.train` / `val` (the datasets the release prepares);
- `global.job.data.trainFiles` / `valFiles`, by a path segment or file stem that is a code adapter's name or
  data_source (`data/taco/taco.parquet`, `data/apps-train.jsonl`).

## Why is this bad?
The frameworks' builtin scorers are not sandboxes. verl 0.9.1's `default_compute_score` sends `apps`, `taco`,
`codecontests` to `prime_code`, which `exec()`s the model's program inside the GPU workers: the pod with the
writable checkpoint mount and `HF_TOKEN` in its environment. miles' builtin `--rm-type deepscaler` is a math
scorer: every program is graded as a boxed answer, reward 0 for everything, and the run trains on noise.

## Example
```yaml
global:
  job:
    reward:
      kind: builtin
fsx-utils:
  data:
    train: [taco]
```
Use instead:
```yaml
global:
  components:
    rewardService: true
    sandboxFusion: true
  job:
    reward:
      kind: sandbox
reward-service:
  routes:
    taco: code
```

## Fix
Set `global.job.reward.kind: sandbox` with the reward service and SandboxFusion enabled and the code sets routed to
`code` in `reward-service.routes`: model-written code then runs only in the sandbox pods (docs/security.md).
"""

REMEDIATION = ("set global.job.reward.kind: sandbox, enable global.components.rewardService and sandboxFusion, and "
               "route the code datasets to `code` in reward-service.routes")


def code_names() -> dict[str, str]:
    """Every name a code dataset goes by (adapter name and data_source) -> the adapter name."""
    from ...data.adapters import REGISTRY

    out: dict[str, str] = {}
    for adapter in REGISTRY.values():
        if adapter.ability == "code":
            out[adapter.name.lower()] = adapter.name
            out[adapter.data_source.lower()] = adapter.name
    return out


def _named_in_path(path: str, names: dict[str, str]) -> str | None:
    parts = [p.lower() for p in posixpath.normpath(path).split("/") if p]
    if not parts:
        return None
    stem = parts[-1].split(".", 1)[0]
    candidates = [*parts[:-1], stem, *stem.replace("_", "-").split("-")]
    return next((names[c] for c in candidates if c in names), None)


def check(ctx) -> Iterator[Hit]:
    if not ctx.has_values or ctx.get("global.job.reward.kind") != "builtin":
        return
    if ctx.get("global.components.raycluster") is False:
        return  # an evaluation release: nothing is trained or scored by the framework
    framework = ctx.get("global.job.framework") or "verl"
    why = ("verl's builtin scorer exec()s the model's program in the GPU workers" if framework == "verl" else
           "miles' builtin scorer grades programs as math answers (reward 0 for everything)")
    names = code_names()
    from ...data.adapters import REGISTRY

    for split in ("train", "val"):
        for i, spec in enumerate(ctx.get(f"fsx-utils.data.{split}") or []):
            adapter = REGISTRY.get(str(spec).split(":", 1)[0])
            if adapter is not None and adapter.ability == "code":
                yield Hit(f"fsx-utils.data.{split}.{i}", f"code dataset {adapter.name} with "
                          f"global.job.reward.kind builtin: {why}", remediation=REMEDIATION,
                          related=("global.job.reward.kind",))
    for key in ("trainFiles", "valFiles"):
        for i, path in enumerate(ctx.get(f"global.job.data.{key}") or []):
            name = _named_in_path(str(path), names)
            if name:
                yield Hit(f"global.job.data.{key}.{i}", f"{path} is the code dataset {name} and "
                          f"global.job.reward.kind is builtin: {why}", remediation=REMEDIATION,
                          related=("global.job.reward.kind",))
