"""GRPO840 shell-syntax."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator

from ..finding import Hit, Severity
from ..shell import scripts, walk

CODE = "GRPO840"
NAME = "shell-syntax"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "A shell script in a pod (`sh -c`, `bash -c`, exec probe, lifecycle hook) does not parse."
DOC = """## What it does
Parses every script a pod runs through `sh|bash [flags] -c SCRIPT` — entrypoints, exec probes and lifecycle
hooks, in any pod template — with tree-sitter's bash grammar, and confirms a reported error with `bash -n` where
bash is installed. A script that does not parse is reported with the line of the first error. A script that
parses but whose backslash-continued command is cut by a comment line is reported too: bash ends the command at
the comment, and the next line, which starts with a flag (`--lr 1e-5`), runs as a command of its own (`--lr:
command not found`), after the command already ran without it.

## Why is this bad?
The container starts, the shell refuses the script, and the pod enters CrashLoopBackOff after the image pull and
scheduling have already cost minutes; in a Job the retries burn the backoff limit. A backslash-continued command
with a comment in the middle (the predecessor's) or an unclosed quote from templating are typical.

## Example
```yaml
command: ["bash", "-c"]
args:
  - |
    if [ -f /fsx/ready ]; then
      echo ready
```
Use instead:
```yaml
command: ["bash", "-c"]
args:
  - |
    if [ -f /fsx/ready ]; then
      echo ready
    fi
```

## Fix
Fix the script; run it through `bash -n` (or shellcheck) before templating it into a manifest.
"""


def check(ctx) -> Iterator[Hit]:
    for s in scripts(ctx):
        for comment, orphan, text in _cut_continuations(s):
            yield Hit(s.path, f"{s.obj.kind} {s.obj.name}: in the script of {s.where}, the comment on script line "
                      f"{comment} ends the command continued from the line above; line {orphan} ({text[:60]}) runs "
                      "as a command of its own: move the comment above the command", obj=s.obj)
        if not s.root.has_error:
            continue
        first = next((n for n in walk(s.root) if n.type == "ERROR" or n.is_missing), s.root)
        confirmed, detail = _bash_confirms(s.source)
        if not confirmed:
            continue  # tree-sitter's grammar is stricter than bash in a few corners; bash has the last word
        yield Hit(s.path, f"{s.obj.kind} {s.obj.name}: the script of {s.where} does not parse "
                  f"(script line {s.line_of(first)}{': ' + detail if detail else ''})", obj=s.obj)


def _bash_confirms(source: str) -> tuple[bool, str]:
    bash = shutil.which("bash")
    if bash is None:
        return True, ""
    try:
        done = subprocess.run([bash, "-n"], input=source, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return True, ""
    first = done.stderr.strip().splitlines()[0] if done.stderr.strip() else ""
    detail = first.split(": ", 1)[1] if first.startswith(("/", "bash:")) and ": " in first else first
    return done.returncode != 0, detail[:200]


def _cut_continuations(s) -> Iterator[tuple[int, int, str]]:
    """(comment line, orphaned line, its text) for each shell comment on a line a backslash continued whose command
    goes on below it with a flag."""
    lines = s.source.split("\n")
    found = []
    for row in range(1, len(lines)):
        if not lines[row].lstrip().startswith("#"):
            continue  # a comment after code on its line ends that line only
        above = lines[row - 1].rstrip()
        if above.lstrip().startswith("#") or not above.endswith("\\") or above.endswith("\\\\"):
            continue  # not continued (a comment's own backslash continues nothing; `\\` is a literal backslash)
        below = next((k for k in range(row + 1, len(lines))
                      if lines[k].strip() and not lines[k].lstrip().startswith("#")), None)
        if below is not None and lines[below].lstrip().startswith("-"):
            found.append((row, below))
    if not found:
        return  # the common case: no script tree to walk
    comments = {n.start_point[0] for n in walk(s.root) if n.type == "comment"}  # not a heredoc's or a string's line
    for row, below in found:
        if row in comments:
            yield row + 1, below + 1, lines[below].strip()
