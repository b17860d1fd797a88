"""Per-GPU memory of a GRPO run before any GPU is requested: trainer, reference model and rollout engine, by phase.

`arch` counts parameters from a model's shape; `terms` holds the sourced formulas (model states, activations,
logits, KV cache, engine budgets, margins); `model` assembles them into phases for one resolved run and searches
the nearest fixes; `resolve` turns a built job into that run; `view` prints the breakdown. The formulas and their
sources are in docs/memory.md and the shared reference gpu-memory.md. Stdlib only.
"""

from .arch import Arch
from .model import GIB, Phase, Report, Run, Term, estimate, nearest_fixes

__all__ = ["GIB", "Arch", "Phase", "Report", "Run", "Term", "estimate", "nearest_fixes"]
