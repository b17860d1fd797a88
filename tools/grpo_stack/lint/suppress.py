"""Suppressions, only with a reason: inline `# grpo-lint: disable=GRPO123 <reason>` or a config file; and the
config file's per-rule settings (a rule module that declares CONFIG_KEY and read_config owns that section).

An inline comment applies to the key on its line (trailing comment) or to the key on the next line (a
comment on its own line), and to everything under that key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..filereader import read_text
from ..safeyaml import load_documents

DIRECTIVE = re.compile(r"#\s*grpo-lint:\s*disable=([A-Z0-9,]+)[ \t]*(.*)$")


@dataclass(frozen=True)
class Suppression:
    codes: frozenset[str]
    reason: str
    file: str
    line: int  # the line of the directive
    target_line: int  # the key line it applies to


def inline_suppressions(file: str, text: str) -> list[Suppression]:
    out: list[Suppression] = []
    if "grpo-lint" not in text:  # no directive: the lines are not searched one by one
        return out
    lines = text.splitlines()
    for i, line in enumerate(lines, start=1):
        m = DIRECTIVE.search(line)
        if not m:
            continue
        own_line = line.strip().startswith("#")
        target = i
        if own_line:  # applies to the next non-comment line
            target = next((j for j in range(i + 1, len(lines) + 1) if not lines[j - 1].strip().startswith("#")
                           and lines[j - 1].strip()), i)
        codes = frozenset(c for c in m.group(1).split(",") if c)
        out.append(Suppression(codes, m.group(2).strip(), file, i, target))
    return out


@dataclass(frozen=True)
class ConfigSuppression:
    code: str
    reason: str
    paths: tuple[str, ...]  # glob patterns of files it applies to; empty = all


@dataclass(frozen=True)
class LintConfig:
    """`.grpo-lint.yaml`: suppressions, and settings keyed by a rule's CONFIG_KEY (the rule reads them from
    ctx.extra[CONFIG_KEY])."""

    disable: tuple[ConfigSuppression, ...] = ()
    settings: dict[str, Any] = field(default_factory=dict)


def _rule_sections() -> dict[str, Any]:
    from .rules import RULES

    return {r.CONFIG_KEY: r for r in RULES.values() if hasattr(r, "CONFIG_KEY")}


def load_config(path: str | Path) -> LintConfig:
    """`.grpo-lint.yaml`: `disable: [{code: GRPO123, reason: "...", paths: ["values/x.yaml"]}]`, plus one
    section per configurable rule (`image-pinning: {floating: [...], pinned: [...]}`). A refused entry is
    reported at its line."""
    name = str(path)
    text = read_text(path)
    try:
        return _load_config(text, name)
    except InputError as exc:
        if exc.line is not None or not exc.key_path or exc.file != name:
            raise
        at = key_position(text, exc.key_path)
        if at is None:
            raise
        raise InputError(name, exc.message, line=at[0], column=at[1], key_path=exc.key_path) from None


def key_position(text: str, key_path: str) -> tuple[int, int] | None:
    """(line, column), 1-based, of the entry `key_path` names in a YAML mapping; keys may hold dots
    (`instance-types.g4dn.12xlarge.gpuMemory`): the longest key that matches is taken at each level."""
    from ..positions import load

    docs = load(text)
    node, rest, at = (docs[0] if docs else None), key_path, None
    while rest and node is not None:
        if isinstance(node, list):
            head, _, tail = rest.partition(".")
            if not head.isdigit() or int(head) >= len(node):
                return at
            at, node, rest = node.lc.item(int(head)), node[int(head)], tail
        elif isinstance(node, dict):
            keys = [k for k in node if isinstance(k, str) and (rest == k or rest.startswith(k + "."))]
            if not keys:
                return at
            key = max(keys, key=len)
            at, node, rest = node.lc.key(key), node[key], rest[len(key) + 1:]
        else:
            return at
    return (at[0] + 1, at[1] + 1) if at else None


def _load_config(text: str, name: str) -> LintConfig:
    docs = load_documents(text, name)
    if len(docs) > 1:
        raise InputError(name, "lint config must be one YAML document")
    data = docs[0] if docs else {}
    sections = _rule_sections()
    allowed = ["disable", *sorted(sections)]
    if not isinstance(data, dict):
        raise InputError(name, f"lint config must be a mapping with the keys {', '.join(allowed)}")
    unknown = sorted(str(k) for k in set(data) - set(allowed))
    if unknown:
        raise InputError(name, f"unknown lint config key (known: {', '.join(allowed)})", key_path=unknown[0])
    settings = {key: sections[key].read_config(data[key], name) for key in sorted(sections) if key in data}
    return LintConfig(_disable_entries(data.get("disable"), name), settings)


def _disable_entries(entries: Any, name: str) -> tuple[ConfigSuppression, ...]:
    entries = entries or []
    if not isinstance(entries, list):
        raise InputError(name, "expected a list of {code, reason, paths}", key_path="disable")
    out = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or set(entry) - {"code", "reason", "paths"} or "code" not in entry:
            raise InputError(name, "expected {code, reason, paths}", key_path=f"disable.{i}")
        paths = entry.get("paths") or []
        if not isinstance(paths, list) or not all(isinstance(g, str) for g in paths):
            raise InputError(name, "expected a list of file globs", key_path=f"disable.{i}.paths")
        out.append(ConfigSuppression(str(entry["code"]), str(entry.get("reason") or "").strip(), tuple(paths)))
    return tuple(out)
