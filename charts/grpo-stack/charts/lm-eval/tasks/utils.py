"""Scoring helpers for the pass@k task variants: lm-eval's own HumanEval implementations, re-exported.

`pass_at_k` is the generic code_eval pass@k (references, k candidates per problem); MBPP uses it too.
"""

from lm_eval.tasks.humaneval.utils import build_predictions, pass_at_k  # noqa: F401
