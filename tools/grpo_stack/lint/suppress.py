"""Suppressions, only with a reason: inline `# grpo-lint: disable=GRPO123 <reason>` or a config file.

An inline comment applies to the key on its line (trailing comment) or to the key on the next line (a
comment on its own line), and to everything under that key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..errors import InputError

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
    p = Path(path)
    try:
        data = yaml.safe_load(p.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise InputError(str(p), f"cannot read lint config: {exc}") from None
    if not isinstance(data, dict) or set(data) - {"disable"}:
        raise InputError(str(p), "lint config must be a mapping with only the key `disable`")
    out = []
    for i, entry in enumerate(data.get("disable") or []):
        if not isinstance(entry, dict) or set(entry) - {"code", "reason", "paths"} or "code" not in entry:
            raise InputError(str(p), f"disable.{i}: expected {{code, reason, paths}}")
        out.append(ConfigSuppression(str(entry["code"]), str(entry.get("reason") or "").strip(),
                                     tuple(entry.get("paths") or ())))
    return out
