"""GRPO903 eval-checkpoint-step."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity

CODE = "GRPO903"
NAME = "eval-checkpoint-step"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "global.eval.checkpointStep names a checkpoint the run never saves, or one grpo-eval merge cannot convert."
DOC = """## What it does
In an evaluation release (`global.components.vllm` on, `global.eval.checkpointStep` set), checks that the run
described by the same values file writes that step's checkpoint and that `grpo-eval merge` can turn it into the
`<checkpointDir>/global_step_<N>/merged` directory vLLM serves:

- `trainer.saveFreq: -1` saves nothing: an error;
- step 0 is never saved (verl counts steps from 1; the base model is `checkpointStep: null`): an error;
- `global.job.framework: miles`: an error; miles saves Megatron checkpoints, and `grpo-eval merge` converts verl
  checkpoints (`global_step_<N>/actor` with its `huggingface/` config) only;
- a step that is not a multiple of `trainer.saveFreq`: a warning; verl saves those steps and the run's last
  step only, so it exists only if it is the last.

## Why is this bad?
The vLLM pod mounts exactly that directory and its provenance gate refuses anything else: a step the run never
wrote leaves the evaluation release crash-looping in its init container on a GPU node, and lm-eval waiting for
it until its startup budget is spent (up to 90 minutes by default), before anyone learns the step was never
there.

## Example
```yaml
global:
  job:
    trainer: {saveFreq: 50}
  eval:
    checkpointStep: 120
```
Use instead:
```yaml
global:
  eval:
    checkpointStep: 100
```

## Fix
Evaluate a step the run saves: a multiple of `global.job.trainer.saveFreq` (or its last step), `null` for the
base model.
"""


def check(ctx) -> Iterator[Hit]:
    if not ctx.has_values or not ctx.component_enabled("vllm"):
        return
    step = ctx.get("global.eval.checkpointStep")
    save = ctx.get("global.job.trainer.saveFreq")
    if not isinstance(step, int) or isinstance(step, bool) or not isinstance(save, int):
        return
    key, related = "global.eval.checkpointStep", ("global.job.trainer.saveFreq",)
    if ctx.get("global.job.framework") == "miles":
        yield Hit(key, f"checkpoint step {step} of a miles run: miles saves Megatron checkpoints and grpo-eval "
                  f"merge converts verl checkpoints only, so global_step_{step}/merged is never written",
                  remediation="evaluate the base model (global.eval.checkpointStep: null) or convert the "
                  "checkpoint to Hugging Face weights yourself", related=("global.job.framework",))
    elif save <= 0:
        yield Hit(key, f"checkpoint step {step}, but trainer.saveFreq {save} saves no checkpoint", related=related,
                  remediation="set global.job.trainer.saveFreq in the run's values, or evaluate the base model")
    elif step == 0:
        yield Hit(key, "checkpoint step 0 is never saved (verl counts steps from 1); the base model is "
                  "global.eval.checkpointStep: null", remediation="set global.eval.checkpointStep: null")
    elif step % save:
        lower = step - step % save
        yield Hit(key, f"checkpoint step {step} is not a multiple of trainer.saveFreq {save}: verl saves it only "
                  "if it is the run's last step", severity=Severity.WARNING, related=related,
                  remediation=f"evaluate step {lower or save} or {lower + save}, unless {step} is the last step")
