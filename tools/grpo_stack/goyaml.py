"""How Helm reads one plain (unquoted, untagged) YAML scalar: go-yaml v2's `resolve` (sigs.k8s.io/yaml, the reader
behind `helm -f`), restated so grpo-lint can refuse every scalar that PyYAML (YAML 1.1) reads differently.

go-yaml v2 differs from PyYAML in both directions: `y`/`n` are booleans, `08`, `1e3`, `+.5` and `0o17` numbers,
while `1:30` (sexagesimal) stays a string, and so does every date (go-yaml resolves it, then hands a string to
an untyped target for compatibility; PyYAML builds a date, refused in safeyaml).
tests/values/test_helm_scalar_reading.py checks every form against the pinned Helm binaries' own reading.
"""

from __future__ import annotations

import math
import re

_BOOLS = {**dict.fromkeys(("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"), True),
          **dict.fromkeys(("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"), False)}
_NULLS = frozenset(("", "~", "null", "Null", "NULL"))
_SPECIAL_FLOATS = {**dict.fromkeys((".nan", ".NaN", ".NAN"), math.nan),
                   **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), math.inf),
                   **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), -math.inf)}
_YAML_STYLE_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
# Go's strconv.ParseFloat on text starting with '.': decimal digits, optional exponent; an underscore only
# between two digits (strconv's underscoreOK: `.5_0` is 0.5, `._5` and `.5_` are strings).
_GO_DOT_FLOAT = re.compile(r"\.[0-9]+(_[0-9]+)*([eE][-+]?[0-9]+(_[0-9]+)*)?")
_DIGITS = {2: "01", 8: "01234567", 10: "0123456789", 16: "0123456789abcdefABCDEF"}
INT64, UINT64 = 2**63, 2**64


def plain_scalar(text: str) -> tuple[str, object]:
    """(kind, value) as go-yaml v2 resolves the plain scalar `text` into Helm's untyped values: kind is str,
    bool, null, int or float (`<<` is a merge key by position, not by resolution, in both readers)."""
    hint = _hint(text)
    if hint is None:
        return "str", text
    if text in _BOOLS:
        return "bool", _BOOLS[text]
    if text in _NULLS:
        return "null", None
    if text in _SPECIAL_FLOATS:
        return "float", _SPECIAL_FLOATS[text]
    if hint == ".":
        if _GO_DOT_FLOAT.fullmatch(text) and math.isfinite(float(text.replace("_", ""))):
            return "float", float(text.replace("_", ""))
        return "str", text
    if hint == "D":  # digit or sign
        plain = text.replace("_", "")
        value = _parse_int(plain)
        if value is not None and -INT64 <= value < UINT64:
            return "int", value
        if _YAML_STYLE_FLOAT.fullmatch(plain):
            number = float(plain)
            if math.isfinite(number):  # ParseFloat reports a range error; the scalar then stays a string
                return "float", number
        if plain.startswith(("0b", "-0b")):
            digits = plain[2:] if plain.startswith("0b") else plain[3:]
            if digits and all(c in "01" for c in digits):
                value = int(digits, 2) * (-1 if plain.startswith("-") else 1)
                if -INT64 <= value < UINT64:
                    return "int", value
    return "str", text


def _hint(text: str) -> str | None:
    if not text:
        return "M"
    first = text[0]
    if first in "+-0123456789":
        return "D"
    if first == ".":
        return "."
    if first in "yYnNtTfFoO~":
        return "M"
    return None


def _parse_int(text: str) -> int | None:
    """strconv.ParseInt(text, 0, 64) / ParseUint without the range check: sign, base prefix, digits."""
    sign, body = 1, text
    if body[:1] in "+-":
        sign, body = (-1 if body[0] == "-" else 1), body[1:]
    base = 10
    if body[:2].lower() == "0x":
        base, body = 16, body[2:]
    elif body[:2].lower() == "0o":
        base, body = 8, body[2:]
    elif body[:2].lower() == "0b":
        base, body = 2, body[2:]
    elif len(body) > 1 and body[0] == "0":
        base, body = 8, body[1:]
    if not body or any(c not in _DIGITS[base] for c in body):
        return None
    return sign * int(body, base)
