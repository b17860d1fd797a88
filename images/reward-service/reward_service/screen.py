"""Pre-screening: answers math-verify cannot finish within its timeout are recognised in microseconds.

Degenerate responses are common early in RL; each used to hold a worker for a whole math-verify timeout (1 s), so
1 % of them halved throughput. The screen looks only at the last `\\boxed{...}` group, the candidate math-verify
parses first, and flags two shapes measured to exhaust the timeout every time:

- brace nesting deeper than MAX_BRACE_DEPTH: bare braces time out from 16 levels, `\\frac` chains from 32
  (math-verify 0.9.0, 1 s timeout); parsing gives up, so the verdict was already "no answer", reward 0;
- a numeric power tower whose value has more than MAX_DIGITS digits (`9^{9^{9^{9}}}`, `2^{10^{10}}`) while the
  label has no power or factorial of its own: `10^{100000}` and `9^{9^{5}}` already time out in the comparison,
  and a label without `^` or `!` cannot be equal to such a number without that evaluation, so the verdict was
  already 0.

A screened sample gets reward 0.0 with status `screened`, the reward math-verify gave it after its timeout. Every
reference answer of the supported math sets and every clean sample of the benchmark mix passes the screen
(tests/reward/test_reward_screen.py). Responses without `\\boxed` are not screened.
"""

from __future__ import annotations

import math
import re

MAX_BRACE_DEPTH = 100
MAX_DIGITS = 1_000_000
# Examined from the last \boxed onward; longer boxed content than this is measured only on this prefix.
MAX_SCAN_CHARS = 100_000
_BOXED = "\\boxed"
_GOLD_HAS_POWER = re.compile(r"\^|!|\\exp|\\uparrow")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def screen(golds: tuple[str, ...], response: str) -> str | None:
    """Why the response cannot be scored within the timeout, or None when it must go to math-verify."""
    start = response.rfind(_BOXED)
    if start < 0:
        return None
    region = response[start + len(_BOXED):start + len(_BOXED) + MAX_SCAN_CHARS]
    depth = _max_brace_depth(region)
    if depth > MAX_BRACE_DEPTH:
        return f"the boxed answer nests braces {depth} deep (limit {MAX_BRACE_DEPTH}); math-verify cannot parse it"
    if "^" in region and not any(_GOLD_HAS_POWER.search(gold) for gold in golds):
        digits = _largest_power_digits(region)
        if digits > MAX_DIGITS:
            size = "more than 10^300" if math.isinf(digits) else f"about {digits:.3g}"
            return (f"the boxed answer is a power with {size} digits and the label has no power: "
                    "it cannot equal the label")
    return None


def _max_brace_depth(text: str) -> int:
    depth = deepest = 0
    for char in text:
        if char == "{":
            depth += 1
            if depth > deepest:
                deepest = depth
        elif char == "}":
            depth -= 1
            if depth == 0:
                break  # the end of the boxed group
    return deepest


def _largest_power_digits(text: str) -> float:
    """log10 of the largest numeric power `a^b`, `a^{...}`, `a^b^c` in the text (inf when astronomically large)."""
    largest = 0.0
    for match in re.finditer(r"(\d+(?:\.\d+)?)\s*\^", text):
        largest = max(largest, _power_log10(text, match.start()))
        if math.isinf(largest):
            break
    return largest


def _power_log10(text: str, pos: int) -> float:
    """log10 of the tower starting at text[pos] (a number followed by `^`); bounded by the text's length."""
    base_match = _NUMBER.match(text, pos)
    base = float(base_match.group())
    pos = base_match.end()
    while pos < len(text) and text[pos] == " ":
        pos += 1
    if pos >= len(text) or text[pos] != "^" or base <= 1:
        return math.log10(base) if base > 0 else 0.0
    exponent_log10 = _exponent_log10(text, pos + 1)
    if exponent_log10 is None:
        return 0.0  # not a plain number tower (symbols, fractions): not screened
    if exponent_log10 > 300:
        return math.inf
    return (10 ** exponent_log10) * math.log10(base)


def _exponent_log10(text: str, pos: int, depth: int = 0) -> float | None:
    """log10 of the exponent at text[pos]: a single digit, `{number}`, `{tower}`, or a `^` chain; None otherwise."""
    if depth > 50:
        return None
    while pos < len(text) and text[pos] == " ":
        pos += 1
    if pos < len(text) and text[pos] == "{":
        inner = pos + 1
        number = _NUMBER.match(text, inner)
        if not number:
            return _exponent_log10(text, inner, depth + 1) if text.startswith("{", inner) else None
        after = number.end()
        while after < len(text) and text[after] == " ":
            after += 1
        if after < len(text) and text[after] == "}":
            return math.log10(max(float(number.group()), 1.0))
        if after < len(text) and text[after] == "^":
            return _power_log10(text, inner)
        return None
    number = _NUMBER.match(text, pos)
    if not number:
        return None
    # LaTeX takes one character as an unbraced exponent (`2^10` is 2^1 then 0); plain text `9^9^9` chains.
    digit_end = pos + 1
    if digit_end < len(text) and text[digit_end] == "^":
        return _power_log10(text, pos)
    return math.log10(max(float(text[pos]), 1.0))
