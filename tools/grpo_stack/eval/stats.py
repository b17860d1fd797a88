"""Significance of a difference between two lm-eval scores.

Paired when both runs logged per-sample scores on the same documents (the test statistic is the mean of the
per-document differences over its standard error, so documents both runs get right or wrong cancel), otherwise
unpaired from the two reported standard errors (independent samples: the variances add). Both are normal
approximations; lm-eval's own stderr is the sample standard deviation over sqrt(n), which is what we use too.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Delta:
    delta: float
    se: float
    z: float
    p: float
    test: str  # "paired" | "unpaired"
    n: int | None = None  # documents in the paired test


def two_sided_p(z: float) -> float:
    return math.erfc(abs(z) / math.sqrt(2.0))


def unpaired(run: float, run_se: float, base: float, base_se: float) -> Delta:
    se = math.sqrt(run_se**2 + base_se**2)
    d = run - base
    z = d / se if se > 0 else (0.0 if d == 0 else math.copysign(math.inf, d))
    return Delta(d, se, z, two_sided_p(z), "unpaired")


def paired(run: Sequence[float], base: Sequence[float]) -> Delta:
    """run[i] and base[i] are the two runs' scores on the same document i."""
    n = len(run)
    if n != len(base) or n < 2:
        raise ValueError("paired test needs the same documents in both runs, at least two")
    diffs = [r - b for r, b in zip(run, base, strict=True)]
    mean = sum(diffs) / n
    var = sum((x - mean) ** 2 for x in diffs) / (n - 1)
    se = math.sqrt(var / n)
    z = mean / se if se > 0 else (0.0 if mean == 0 else math.copysign(math.inf, mean))
    return Delta(mean, se, z, two_sided_p(z), "paired", n)
