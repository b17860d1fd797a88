"""miles' own argparse catalogue (catalog/miles_flags.json, extracted from the pinned miles + Megatron-LM source):
check a miles argv the way miles' parser would read it, without miles installed. Stdlib only."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

CATALOGUE = Path(__file__).resolve().parent.parent / "catalog" / "miles_flags.json"
ZERO_ARITY = {"store_true", "store_false", "store_const", "count", "append_const"}


@lru_cache(maxsize=1)
def catalogue() -> dict[str, Any]:
    return json.loads(CATALOGUE.read_text(encoding="utf-8"))


def lookup(flag: str) -> dict[str, Any] | None:
    cat = catalogue()
    return cat["flags"].get(flag) or cat["unverified"].get(flag)


def pinned_build() -> str:
    """`miles@<sha12> + Megatron-LM@<sha12>`: the exact build the catalogue (and the image) hold."""
    return " + ".join(f"{s['repository'].split('/')[-1]}@{s['commit'][:12]}" for s in catalogue()["sources"])


def arity(spec: dict[str, Any]) -> tuple[int, int | None]:
    """(min, max) values the flag takes; max None = unbounded."""
    action = spec.get("action") or ""
    if action in ZERO_ARITY or action.endswith("BooleanOptionalAction"):
        return 0, 0
    nargs = spec.get("nargs")
    if nargs is None:
        return 1, 1
    if isinstance(nargs, int):
        return nargs, nargs
    return {"+": (1, None), "*": (0, None), "?": (0, 1)}.get(nargs, (0, None))


def value_error(flag: str, spec: dict[str, Any], value: str) -> str | None:
    kind = spec.get("type")
    if kind in ("int", "float"):
        try:
            (int if kind == "int" else float)(value)
        except ValueError:
            return f"{flag} takes {kind} values, got {value!r}"
    choices = spec.get("choices")
    if isinstance(choices, list) and value not in [str(c) for c in choices]:
        return f"{flag}: {value!r} is not one of {', '.join(map(str, choices))}"
    return None


def split_flags(tokens: list[str]) -> tuple[list[tuple[str, list[str]]], list[str]]:
    """Group `--flag v1 v2` the way argparse does (a value never starts with `--`); errors for unknown flags,
    wrong value counts and values outside the flag's type or choices."""
    groups: list[tuple[str, list[str]]] = []
    errors: list[str] = []
    for tok in tokens:
        if tok.startswith("--") and "=" in tok:  # argparse's --flag=value form: exactly one value
            flag, _, value = tok.partition("=")
            groups.append((flag, [value]))
            groups.append(("", []))  # nothing may follow as a further value of this flag
        elif tok.startswith("--"):
            groups.append((tok, []))
        elif not groups:
            errors.append(f"{tok!r} is not a flag (miles takes --flag [values])")
        else:
            groups[-1][1].append(tok)
    for flag, values in groups:
        if not flag:
            if values:
                errors.append(f"{values[0]!r} follows a --flag=value token; give it its own flag")
            continue
        spec = lookup(flag)
        if spec is None:
            errors.append(f"{flag} is not a miles/Megatron flag at the pinned build ({pinned_build()})")
            continue
        lo, hi = arity(spec)
        if len(values) < lo or (hi is not None and len(values) > hi):
            want = f"{lo}" if lo == hi else f"{lo}..{'n' if hi is None else hi}"
            errors.append(f"{flag} takes {want} value(s), got {len(values)}: {values}")
            continue
        if spec.get("nargs") in ("+", "*") and any(any(c.isspace() for c in v) for v in values):
            errors.append(f"{flag} takes a list: {values} looks like several values joined into one token")
            continue
        errors += [e for v in values if (e := value_error(flag, spec, v))]
    return [(f, v) for f, v in groups if f], errors


def check_argv(tokens: list[str]) -> list[str]:
    return split_flags(tokens)[1]


def dests(flag: str) -> set[str]:
    """Every alias of the flag (e.g. --no-x / --disable-x), to tell when two spellings set the same thing."""
    spec = lookup(flag)
    return set(spec.get("aliases") or [flag]) if spec else {flag}
