"""Suppressions, only with a reason: inline `# grpo-lint: disable=GRPO123 <reason>` or a config file.

An inline comment applies to the key on its line (trailing comment) or to the key on the next line (a
comment on its own line), and to everything under that key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from ..safeyaml import load_documents, read_text

DIRECTIVE = re.compile(r"#\s*grpo-lint:\s*disable=([A-Z0-9,]+)[ \t]*(.*)$")


@dataclass(frozen=True)
class Suppression:
    codes: frozenset[str]
    reason: str
    file: str
    line: int  # the line of the directive
    target_line: int  # the key line it applies to


def inline_suppressions(file: str, text: str) -> list[Suppression]:
    out = []
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


def load_config(path: str | Path) -> list[ConfigSuppression]:
    """`.grpo-lint.yaml`: `disable: [{code: GRPO123, reason: "...", paths: ["values/x.yaml"]}]`."""
    name = str(path)
    docs = load_documents(read_text(path), name)
    if len(docs) > 1:
        raise InputError(name, "lint config must be one YAML document")
    data = docs[0] if docs else {}
    if not isinstance(data, dict) or set(data) - {"disable"}:
        raise InputError(name, "lint config must be a mapping with only the key `disable`")
    entries = data.get("disable") or []
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
    return out
