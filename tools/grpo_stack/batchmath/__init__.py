"""Batch and parallelism arithmetic of verl, miles, Megatron-core and the rollout engines. Stdlib only.

The formulas and their sources are in docs/batch-math.md. Modules: `verl`, `miles`, `megatron`, `rollout`
(one function per formula, plain numbers in, `Violation`s out) and `shapes` (whole-configuration checks and
verified nearest alternatives).
"""

from .core import ERROR, WARNING, Violation, nearest
from .shapes import MilesShape, ModelDims, VerlShape, check_miles, check_verl, with_alternatives

__all__ = [
    "ERROR", "WARNING", "MilesShape", "ModelDims", "VerlShape", "Violation", "check_miles", "check_verl", "nearest",
    "with_alternatives",
]
