"""One value written in Hydra's override grammar (hydra-core 1.3) so that Hydra, then OmegaConf, read back exactly
the value the values file holds: strings are quoted unless plainly safe, `${` never becomes an interpolation, a
comma never becomes a sweep, a numeric-looking string stays a string. What the grammar cannot express is refused.

The grammar is Hydra's OverrideParser.g4 / OverrideLexer.g4; tests/job/test_hydra_quoting_oracle.py parses every
form written here with Hydra's own `OverridesParser` and reads the value back through OmegaConf.
"""

from __future__ import annotations

import math
import re

# Unquoted strings stay unquoted only when Hydra reads them as that same string: an identifier or path made of
# characters its lexer takes unquoted, not a bool/null/inf/nan keyword, not starting like a number or a sign.
_PLAIN = re.compile(r"[A-Za-z_/][A-Za-z0-9_./-]*")
_KEYWORDS = frozenset(("true", "false", "null", "inf", "nan"))
# A dictionary key in Hydra's grammar (dictKey): identifier characters only, never quoted.
_DICT_KEY = re.compile(r"[A-Za-z_$][A-Za-z0-9_$\-]*")
# An override key: an identifier path (Hydra's ID / DOT_PATH), optionally with the `+` that adds a new key.
_KEY = re.compile(r"\+?[A-Za-z_$][A-Za-z0-9_$\-]*(\.(?:[A-Za-z_$][A-Za-z0-9_$\-]*|[0-9]+))*")
_BACKSLASHES_BEFORE_INTERPOLATION = re.compile(r"(\\*)\$\{")
_BACKSLASHES_BEFORE_QUOTE = re.compile(r"(\\*)(')")
_TRAILING_BACKSLASHES = re.compile(r"(\\+)\Z")


class HydraValueError(ValueError):
    """The value cannot be written so that Hydra reads it back unchanged (says why and what to do)."""


def override(key: str, value: object) -> str:
    """`key=value` as one Hydra command-line override."""
    if not _KEY.fullmatch(key):
        raise HydraValueError(f"{key!r} is not a key Hydra can address (letters, digits, _ - $ and dots)")
    return f"{key}={value_text(value)}"


def value_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise HydraValueError(f"{value!r} is not a finite number")
        return repr(value)
    if isinstance(value, str):
        return string_text(value)
    if isinstance(value, list | tuple):
        return "[" + ",".join(value_text(v) for v in value) + "]"
    if isinstance(value, dict):
        items = []
        for k, v in value.items():
            if not isinstance(k, str) or not _DICT_KEY.fullmatch(k):
                raise HydraValueError(f"map key {k!r} cannot be written in a Hydra override (Hydra takes only "
                                      "letters, digits, _ - $ in a map key); set that key on its own, dotted")
            items.append(f"{k}:{value_text(v)}")
        return "{" + ",".join(items) + "}"
    raise HydraValueError(f"{type(value).__name__} is not a value Hydra reads")


def string_text(text: str) -> str:
    """A string as Hydra reads it back: plain when safe, else single-quoted with Hydra's and OmegaConf's escapes."""
    if text == "???":
        raise HydraValueError("'???' is OmegaConf's marker of a missing value, whatever the quoting; choose "
                              "another string")
    if _PLAIN.fullmatch(text) and text.lower() not in _KEYWORDS:
        return text
    # OmegaConf: `${` preceded by 2n+1 backslashes is n literal backslashes and a literal `${`.
    escaped = _BACKSLASHES_BEFORE_INTERPOLATION.sub(lambda m: "\\" * (2 * len(m.group(1)) + 1) + "${", text)
    # Hydra's quoted string: backslashes before a quote (or the closing quote) are doubled, the quote escaped.
    escaped = _BACKSLASHES_BEFORE_QUOTE.sub(lambda m: "\\" * (2 * len(m.group(1))) + "\\'", escaped)
    escaped = _TRAILING_BACKSLASHES.sub(lambda m: m.group(1) * 2, escaped)
    return f"'{escaped}'"
