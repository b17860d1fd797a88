"""Input limits, checked before any scoring: every oversized or malformed input gets a status or a 400, never a 500.

- The body: at most REWARD_MAX_BODY_BYTES (413), valid JSON (400), and not nested so deep that the parser itself
  gives up (400). Python refuses int() of more than 4300 digits; such a literal is kept as its digits (text).
  A number a float cannot hold (`1e400` would read as inf, `1e-400` as 0) and the non-JSON constants `NaN`,
  `Infinity` and `-Infinity` (which Python's json.dumps writes for float columns) are kept as their text and are
  never a reference answer: a response of infinity must not match a label that overflowed.
- A sample: a field nested deeper than REWARD_MAX_DEPTH, or a math label longer than REWARD_MAX_LABEL_CHARS, is
  scored 0.0 with status `bad_input` / `bad_label` (HTTP 200: a retry would give the same answer).
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any

# Python's own limit for int() of a decimal string (sys.int_info.default_max_str_digits).
MAX_INT_DIGITS = sys.int_info.default_max_str_digits


class BadRequest(Exception):
    """The body is not a JSON object of the expected shape; the reply is 400 with this one-line reason."""


class TooLarge(Exception):
    """The body is larger than REWARD_MAX_BODY_BYTES; the reply is 413. `read`: body bytes read so far."""

    def __init__(self, message: str, read: int = 0):
        super().__init__(message)
        self.read = read


class LongInteger(str):
    """An integer literal too long for int(): kept as its decimal digits, which is what a label needs anyway."""


class NotAFloat(str):
    """A number a float cannot hold (overflow, underflow to zero), or NaN/Infinity: kept as its literal text."""


def _parse_int(digits: str) -> int | str:
    return int(digits) if len(digits.lstrip("-")) <= MAX_INT_DIGITS else LongInteger(digits)


def _parse_float(literal: str) -> float | str:
    value = float(literal)
    mantissa = literal.lower().partition("e")[0]
    if math.isinf(value) or (value == 0.0 and any(digit in mantissa for digit in "123456789")):
        return NotAFloat(literal)
    return value


def loads(body: bytes) -> Any:
    try:
        return json.loads(body, parse_int=_parse_int, parse_float=_parse_float, parse_constant=NotAFloat)
    except RecursionError:
        raise BadRequest("the body is nested too deeply to parse") from None
    except json.JSONDecodeError as error:
        raise BadRequest(f"the body is not valid JSON: {error.msg} at position {error.pos}") from None
    except UnicodeDecodeError:
        raise BadRequest("the body is not valid UTF-8 JSON") from None
    except ValueError as error:  # anything else the decoder refuses; never echo the body
        raise BadRequest(f"the body is not valid JSON: {str(error)[:200]}") from None


def too_deep(value: Any, limit: int) -> str | None:
    """The path of the first container nested deeper than `limit`, or None; iterative, so it cannot recurse."""
    stack: list[tuple[Any, int, str]] = [(value, 0, "")]
    while stack:
        item, depth, path = stack.pop()
        if isinstance(item, dict):
            children = item.items()
        elif isinstance(item, list):
            children = enumerate(item)
        else:
            continue
        if depth >= limit:
            return path or "the sample"
        for key, child in children:
            if isinstance(child, (dict, list)):
                stack.append((child, depth + 1, f"{path}.{key}" if isinstance(key, str) else f"{path}[{key}]"))
    return None
