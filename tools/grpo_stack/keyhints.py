"""Did-you-mean hints for values the schema refuses: the allowed key or value closest to what was written.

An unknown key is first matched against the keys allowed where it stands (`trainBatchSise` -> `trainBatchSize`),
then against every key the schema knows anywhere, so a key put at the wrong level is named by its full path
(`global.job.trainer.trainBatchSize` -> `global.job.verl.batch.trainBatchSize`). Case is ignored when comparing.
"""

from __future__ import annotations

import difflib
from typing import Any

NEAR = 0.8  # difflib ratio: one or two letters wrong, swapped or missing in a camelCase key


def _closest(word: str, choices: list[str], cutoff: float = NEAR) -> str | None:
    by_lower = {c.lower(): c for c in choices}
    found = difflib.get_close_matches(word.lower(), list(by_lower), n=1, cutoff=cutoff)
    return by_lower[found[0]] if found else None


def value_hint(written: Any, allowed: list[Any]) -> str:
    """` (did you mean 'megatron'?)` for a string close to one allowed string value, else ""."""
    if not isinstance(written, str):
        return ""
    near = _closest(written, [a for a in allowed if isinstance(a, str)])
    return f" (did you mean {near!r}?)" if near else ""


def key_hint(key: str, path: list[str], allowed: list[str], known: tuple[str, ...]) -> str:
    """`did you mean trainBatchSize? ` (same level), `did you mean global.job.batch.trainBatchSize? ` (a key path of
    `known` elsewhere), else ""."""
    near = _closest(key, allowed)
    if near:
        return f"did you mean {near}? "
    here = ".".join(path)
    by_leaf: dict[str, list[str]] = {}
    for p in known:
        parent, _, leaf = p.rpartition(".")
        if parent != here:
            by_leaf.setdefault(leaf, []).append(p)
    leaf = _closest(key, list(by_leaf))
    return f"did you mean {' or '.join(sorted(by_leaf[leaf])[:2])}? " if leaf else ""


def key_paths(schema: dict[str, Any]) -> tuple[str, ...]:
    """Every dotted key path the schema declares, through $refs into its $defs and every anyOf/oneOf/allOf and
    if/then/else branch.
    Not through list items or free-form maps, whose keys a path cannot name."""
    defs = schema.get("$defs", {})
    out: set[str] = set()

    def walk(node: Any, prefix: str, seen: frozenset[str]) -> None:
        if not isinstance(node, dict):
            return
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/") and ref not in seen:
            walk(defs.get(ref.rsplit("/", 1)[1]), prefix, seen | {ref})
        for name, sub in (node.get("properties") or {}).items():
            path = f"{prefix}.{name}" if prefix else name
            out.add(path)
            walk(sub, path, seen)
        for branch in ("anyOf", "oneOf", "allOf"):
            for sub in node.get(branch) or []:
                walk(sub, prefix, seen)
        for branch in ("then", "else"):  # a framework's or backend's own keys
            walk(node.get(branch), prefix, seen)

    walk(schema, "", frozenset())
    return tuple(sorted(out))
