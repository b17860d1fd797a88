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
bash is installed. A script that does not parse is reported with the line of the first error.

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
