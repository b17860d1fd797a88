"""GRPO901 eval-in-training-release."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity

CODE = "GRPO901"
NAME = "eval-in-training-release"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "The vLLM evaluation server or lm-eval is enabled in the release that runs the training RayCluster."
DOC = """## What it does
Flags a values file that enables `global.components.vllm` or `global.components.lmEval` together with
`global.components.raycluster`. Evaluation is its own release: the run's values file plus `values/eval/eval.yaml`,
which turns the RayCluster off.

## Why is this bad?
The predecessor's evaluation started at install, before training had written any checkpoint: vLLM served a
`merged` directory nothing had produced yet and crash-looped, and its GPUs came on top of training's (the 235B
file needed a seventh p6-b200 node). Changing evaluation settings in the training release also re-renders the
training release, and an upgrade there can restart the training pods.

## Example
```yaml
global:
  components:
    raycluster: true
    vllm: true
    lmEval: true
```
Use instead (training release, then an evaluation release once checkpoints exist):
```yaml
global:
  components:
    vllm: false
    lmEval: false
```
```bash
helm install grpo-eval charts/grpo-stack -f values/<run>.yaml -f values/eval/eval.yaml \\
  --set global.eval.checkpointStep=N
```

## Fix
Set `global.components.vllm` and `global.components.lmEval` to false in the training values file and evaluate
in a second release with `values/eval/eval.yaml` (docs/eval.md).
"""


def check(ctx) -> Iterator[Hit]:
    if not ctx.has_values or not ctx.component_enabled("raycluster"):
        return
    for component in ("vllm", "lmEval"):
        if ctx.component_enabled(component):
            yield Hit(f"global.components.{component}", f"global.components.{component} is on in the release that "
                      "runs the training RayCluster; evaluation would start before any checkpoint exists and take "
                      "GPUs from training", remediation="evaluate in a second release with values/eval/eval.yaml",
                      related=("global.components.raycluster",))
