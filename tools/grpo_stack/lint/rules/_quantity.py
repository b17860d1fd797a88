"""Kubernetes quantities read defensively (not a rule: no CODE)."""

from __future__ import annotations

import math

from ...catalog.capacity import QTY, suffix_scale


def quantity(value: object) -> float | None:
    """A Kubernetes quantity (`4`, `2500m`, `6Gi`) as a number, or None where it is not one, so a rule compares
    nothing rather than a made-up zero."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    found = QTY.match(str(value))
    try:
        number = float(found.group(1)) * suffix_scale(found.group(2)) if found else None
    except (ValueError, OverflowError):
        return None
    return number if number is not None and math.isfinite(number) else None


def whole(value: object, default: int) -> int:
    """A count field (`replicas`, `parallelism`, `numOfHosts`) as written, or `default` where it is not an integer
    (a template, a string, a boolean)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else default
