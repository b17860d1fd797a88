"""A run's values file that configures `vllm:` / `lm-eval:` is also linted as the evaluation release it becomes.

The evaluation sections of a run's file are read only by the second release (`helm install … -f <run>.yaml -f
values/eval/eval.yaml`). Linting the run's file alone (the documented CI command) would never check them: a
vLLM tensor-parallel size the model's heads cannot split passed CI and failed when that release started. Here
the file is rendered once more with the shipped overlay on top, the rules run over that release, and the
findings about the evaluation pods and sections are kept, located in the user's file where it sets the key.
"""

from __future__ import annotations

from typing import Any

from ..paths import EVAL_OVERLAY
from ..render import RenderError, job_spec, merged_values, render
from ..values import load_values_file, merge_user_values
from .context import LintContext

EVAL_SECTIONS = ("vllm", "lm-eval")
EVAL_COMPONENTS = frozenset({"vllm", "lm-eval"})
PREFIX = "evaluation release (-f values/eval/eval.yaml): "


def configures_evaluation(user_files: list[Any], merged: dict[str, Any]) -> bool:
    """The user's files set an evaluation section while this release renders no evaluation server."""
    components = (merged.get("global") or {}).get("components") or {}
    if components.get("vllm") or not EVAL_OVERLAY.is_file():
        return False
    return any(isinstance(f.data.get(s), dict) and f.data.get(s) for f in user_files for s in EVAL_SECTIONS)


def evaluation_context(user_files: list[Any], like: LintContext) -> LintContext | None:
    """The lint context of the evaluation release this run's values make (None when it does not render)."""
    from ..job import BuildError, build

    values = merge_user_values([*user_files, load_values_file(EVAL_OVERLAY)])
    try:
        rendered = render(values, release=like.release, namespace=like.namespace, helm_schema=False)
    except RenderError:
        return None
    ctx = LintContext(like.file, like.release, like.namespace, list(rendered.objects), values_file=like.values_file,
                      merged=merged_values(values), rendered=rendered, extra=dict(like.extra))
    try:
        ctx.job_spec = job_spec(rendered)
        ctx.built = build(ctx.job_spec)
    except (BuildError, RenderError):
        pass
    return ctx


def about_evaluation(hit, ctx: LintContext) -> bool:
    """A finding on an evaluation section, the eval settings, or an evaluation pod."""
    if hit.obj is not None:
        labels = (hit.obj.obj.get("metadata") or {}).get("labels") or {}
        return str(labels.get("app.kubernetes.io/component", "")).removesuffix("-test") in EVAL_COMPONENTS
    return hit.key_path.split(".")[0] in EVAL_SECTIONS or hit.key_path.startswith("global.eval.")
