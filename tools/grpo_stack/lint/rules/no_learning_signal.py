"""GRPO340 no-learning-signal."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..finding import Hit, Severity

CODE = "GRPO340"
NAME = "no-learning-signal"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "GRPO groups that cannot differ: one sample per prompt, or greedy / near-greedy sampling of several."
DOC = """## What it does
GRPO learns from the differences between the responses of one prompt's group. Reported, in values
(`global.job.rollout.samplesPerPrompt`, `global.job.rollout.temperature`) and in manifests (verl's
`actor_rollout_ref.rollout.n=` / `.temperature=` overrides, miles' `--n-samples-per-prompt` /
`--rollout-temperature`, in any string of the set: RayJob entrypoints, args, ConfigMaps):
- one sample per prompt: with miles an error (every advantage is the reward minus its own group's mean: zero;
  miles dec268f7 `train_data_conversion.py`); with verl a warning (a group of one gets mean 0 and std 1, so the
  advantage is the raw reward: REINFORCE without a baseline, not GRPO; verl `core_algos.py`
  `compute_grpo_outcome_advantage`);
- temperature 0 with several samples: greedy decoding, every response of a group is the same, every group's
  advantages are zero (an error);
- a temperature below 0.1 with several samples: logits sharpened more than tenfold, groups mostly identical
  (a warning).

## Why is this bad?
The run spends its GPU hours producing gradients of zero (or an unbaselined, high-variance one) while every
step reports success; the reward curve stays flat and nothing says why.

## Example
```yaml
global:
  job:
    rollout:
      samplesPerPrompt: 8
      temperature: 0.0
```
Use instead:
```yaml
global:
  job:
    rollout:
      samplesPerPrompt: 8
      temperature: 1.0
```

## Fix
Sample several responses per prompt (8 is usual) at a temperature near 1.0; keep greedy decoding for
validation.
"""

NEAR_GREEDY = 0.1
# (samples, temperature) spellings on a command line or in a config string.
SAMPLES = re.compile(r"(?:actor_rollout_ref\.rollout\.n=|--n-samples-per-prompt[= ]+)(\d+)\b")
TEMPERATURE = re.compile(r"(?:actor_rollout_ref\.rollout\.temperature=|--rollout-temperature[= ]+)([0-9.]+)")


def _verdicts(framework: str | None, n: int | None, t: float | None) -> list[tuple[str, str, Severity]]:
    """(which setting, message, severity) for one run's samples per prompt and temperature."""
    out = []
    if n == 1:
        if framework == "miles":
            out.append(("n", "one sample per prompt: miles subtracts each group's mean, so every advantage is zero",
                        Severity.ERROR))
        else:
            out.append(("n", "one sample per prompt: no group baseline, the advantage is the raw reward (REINFORCE, "
                        "not GRPO)", Severity.WARNING))
    if t is not None and (n is None or n > 1):
        if t == 0:
            out.append(("t", "temperature 0 is greedy decoding: every response of a group is the same and every "
                        "advantage zero", Severity.ERROR))
        elif t < NEAR_GREEDY:
            out.append(("t", f"temperature {t:g} is near-greedy: a group's responses are mostly identical and "
                        "their advantages zero", Severity.WARNING))
    return out


def check(ctx) -> Iterator[Hit]:
    if ctx.has_values:
        n, t = ctx.get("global.job.rollout.samplesPerPrompt"), ctx.get("global.job.rollout.temperature")
        keys = {"n": "global.job.rollout.samplesPerPrompt", "t": "global.job.rollout.temperature"}
        framework = ctx.get("global.job.framework")
        for which, message, severity in _verdicts(framework, n if isinstance(n, int) else None,
                                                  float(t) if isinstance(t, int | float) else None):
            yield Hit(keys[which], message, severity=severity)
        return
    for o in ctx.objects:
        for path, text in ctx.object_strings(o):
            ns, ts = SAMPLES.findall(text), TEMPERATURE.findall(text)
            if not ns and not ts:
                continue
            framework = "miles" if "--n-samples-per-prompt" in text or "--rollout-temperature" in text else "verl"
            n = int(ns[-1]) if ns else None
            t = _float(ts[-1]) if ts else None
            for _, message, severity in _verdicts(framework, n, t):
                yield Hit(path, f"{o.kind} {o.name}: {message}", obj=o, severity=severity)


def _float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None
