"""Violations and the "nearest valid alternatives" search shared by the verl, miles and Megatron checks."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

ERROR = "error"
WARNING = "warning"


@dataclass(frozen=True)
class Violation:
    """One failed formula. `field` is the input whose change fixes it; `alternatives` are verified values for it."""

    rule_id: str  # the sheet's id: V2, R1, M5, S3, E1, ...
    message: str  # the formula with the numbers filled in
    severity: str = ERROR
    fix: str = ""
    field: str = ""
    related: tuple[str, ...] = ()
    alternatives: tuple[int, ...] = ()


def violation(rule_id: str, message: str, field: str, *, related: Iterable[str] = (), severity: str = ERROR,
              fix: str = "") -> Violation:
    return Violation(rule_id, message, severity, fix, field, tuple(related))


# Candidates tried on each side of the value: suggestions are for nearby values, and a huge input (2**53) must
# not turn the search into billions of checks. Beyond HUGE (no real batch or length is that large) the span is
# small: the suggestion hardly matters there, the finding does.
SEARCH_SPAN = 1 << 16
HUGE, HUGE_SPAN = 1 << 20, 1 << 10


def nearest(value: int, ok: Callable[[int], bool], *, lo: int = 1, hi: int | None = None, count: int = 2) -> list[int]:
    """Up to `count` values closest to `value` for which `ok` holds: the nearest below and above first, within
    SEARCH_SPAN of `value`."""
    value = int(value)  # an integral float (2.5e+21) passes an "integer" schema; range() needs an int
    hi = hi if hi is not None else max(4 * value, 64)
    span = SEARCH_SPAN if abs(value) <= HUGE else HUGE_SPAN
    lo, hi = max(lo, value - span), min(hi, value + span)
    below = next((v for v in range(min(value - 1, hi), lo - 1, -1) if ok(v)), None)
    above = next((v for v in range(max(value + 1, lo), hi + 1) if ok(v)), None)
    found = [v for v in (below, above) if v is not None]
    if len(found) < count:  # one side is empty: take more from the other
        side = range(max(value + 1, lo), hi + 1) if below is None else range(min(value - 1, hi), lo - 1, -1)
        found = sorted({*found, *[v for v in side if ok(v)][:count]}, key=lambda v: (abs(v - value), v))
    return sorted(found[:count])


def alternatives_text(name: str, values: Iterable[int]) -> str:
    values = list(values)
    if not values:
        return ""
    return f"use {name}=" + " or ".join(str(v) for v in values)


def exact(num: int, den: int) -> int | None:
    return num // den if den and num % den == 0 else None


def ceil_to(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple
