"""Collecting the shell commands the documentation shows, and deciding how each can be verified here.

The convention (docs/contributing.md, "Commands in the documentation"):
- Markdown (README.md, docs/*.md, images/README.md): fenced blocks whose info string is `bash` (or `sh`,
  `shell`) hold commands; every line is one command (a trailing `\\` joins lines; `#` starts a comment). Output,
  examples of failures and prose go in ```text / ```console blocks, which are never run. Every block names its
  language (tests/docs/test_documented_commands.py), so no command sits in an untagged block unchecked.
- NOTES.txt (rendered for each shipped values file): a command is a line indented by 5 or more spaces, as the
  notes print them; `helm test` on a "N. Label:  command" line is recognised too.
- `<placeholder>`s are filled in: <namespace>/<release> with the release's, <your values file> with the values
  file the notes were rendered from; any other placeholder makes the command check-only.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

PLACEHOLDER = re.compile(r"<([a-z][a-z -]*)>")
FENCE = re.compile(r"^```\s*([\w-]*)")
SHELL_BLOCKS = ("bash", "sh", "shell")


@dataclass(frozen=True)
class Command:
    source: str  # README.md:47, NOTES.txt(qwen3-8b)
    text: str  # as documented, placeholders filled
    values: str  # the values file it belongs to (NOTES), or the last one its document mentions
    unfilled: tuple[str, ...] = ()  # placeholders we could not fill

    @property
    def words(self) -> list[str]:
        try:
            return shlex.split(self.text, comments=True)
        except ValueError:
            return self.text.split()


def markdown_commands(path: Path, root: Path, default_values: str) -> list[Command]:
    """The commands of ```bash blocks; each belongs to the last values file its document mentioned so far."""
    out, block, values, context = [], None, default_values, {}
    for i, line in enumerate(path.read_text().splitlines(), 1):
        mentioned = re.findall(r"values/[\w.-]+\.yaml", line)
        if mentioned:
            values = mentioned[-1]
        m = FENCE.match(line)
        if m:
            block = m.group(1) if block is None else None
            continue
        if block in SHELL_BLOCKS:
            out.append((i, line))
            context[i] = values
    return [_command(f"{path.relative_to(root)}:{n}", text, context[n], {}) for n, text in _join(out)]


def notes_commands(notes: str, values: str, release: str, namespace: str) -> list[Command]:
    candidates = []
    for i, line in enumerate(notes.splitlines(), 1):
        if re.match(r"^ {5,}\S", line):
            candidates.append((i, line.strip()))
        elif (m := re.match(r"^\d+\.\s.*?:\s+(helm test .*)$", line)):
            candidates.append((i, m.group(1)))
    fill = {"namespace": namespace, "release": release, "your values file": values}
    name = Path(values).stem
    return [_command(f"NOTES.txt({name}):{n}", text, values, fill) for n, text in _join(candidates)]


def _join(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Join `\\`-continued lines; drop blank and comment-only lines."""
    out, pending, first = [], "", 0
    for n, line in lines:
        stripped = line.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if not pending:
            first = n
        if stripped.endswith("\\"):
            pending += stripped[:-1].rstrip() + " "
            continue
        out.append((first, pending + stripped))
        pending = ""
    if pending:
        out.append((first, pending.strip()))
    return out


def _command(source: str, text: str, values: str, fill: dict[str, str]) -> Command:
    defaults = {"namespace": "grpo", "release": "grpo", **fill}
    code = re.split(r"\s#", text, maxsplit=1)[0]  # a placeholder in a trailing comment is prose
    unfilled = tuple(p for p in PLACEHOLDER.findall(code) if p not in defaults)
    text = PLACEHOLDER.sub(lambda m: defaults.get(m.group(1), m.group(0)), text)
    return Command(source, text, values, unfilled)
