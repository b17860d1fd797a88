"""GRPO842 pipeline-hides-failure."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity
from ..shell import command_name, command_words, in_condition, scripts, set_changes, text, walk

CODE = "GRPO842"
NAME = "pipeline-hides-failure"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = ("A pipeline in a pod script hides its first command's failure (no `pipefail`), or `export VAR=\"$(cmd)\"` "
           "hides the command's.")
DOC = """## What it does
Tracks the shell options of every pod script (the shell's flags, then each `set`) and reports a pipeline whose exit
status hides a failure: under `set -e` without `pipefail`, any pipeline (`pip install … | tail -1`), and, with or
without `set -e`, a pipeline that is the script's last command (`python train.py | tee log`: the Job's exit status
is `tee`'s). Pipelines in `if`/`while` conditions or before `&&`/`||` are the script's own checks and are skipped;
so are pipelines fed only by `echo`, `printf`, `cat`, `yes` or `seq`, a listing of `env`, `printenv`, `hostname` or
`date` given no arguments through text filters (`env | grep NCCL_ | sort`), and pipelines whose last command is
`grep` (`wget -qO- …/healthz | grep success`, KubeRay's own probe): grep fails when nothing matches, so a producer
that fails and prints nothing fails the pipeline too.
The same class: an assignment inside `export`, `local`, `declare`, `typeset` or `readonly` whose value runs a
command (`export MODEL_DIR="$(resolve-model)"`, `local n=$(nproc)`) has the builtin's status, 0, whatever the
command returned: it is reported under `set -e` and wherever its status is checked (`export X=$(cmd) || exit 1`).

## Why is this bad?
Without `pipefail` a pipeline's status is its last command's. The predecessor's utility pod ran
`pip install … 2>&1 | tail -1` under `set -e`: a failed install looked like success and the pod went Ready
without the packages. A training entrypoint piped into `tee` reports success to Kubernetes after a crash.

## Example
```yaml
args:
  - |
    set -eu
    pip install --no-cache-dir datasets 2>&1 | tail -1
```
Use instead:
```yaml
args:
  - |
    set -euo pipefail
    pip install --no-cache-dir datasets
```

## Fix
Add `set -o pipefail` (with `set -e`), or drop the pipe; assign a command's output first (`X="$(cmd)"`), then
`export X`.
"""

HARMLESS_PRODUCERS = frozenset({"echo", "printf", "cat", "yes", "seq", "true"})
MATCHERS = frozenset({"grep", "egrep", "fgrep"})


DECLARATIONS = frozenset({"export", "local", "declare", "typeset", "readonly"})


def check(ctx) -> Iterator[Hit]:
    for s in scripts(ctx):
        options = set(s.invocation_options)
        last = _last_statement(s.root)
        for node in walk(s.root):
            for opt, on in set_changes(node):
                (options.add if on else options.discard)(opt)
            if node.type == "declaration_command" and _runs_command(node) and ("e" in options or _checked(node)):
                shown = " ".join(text(node).split())[:80]
                yield Hit(s.path, f"{s.obj.kind} {s.obj.name}: `{shown}` (script line {s.line_of(node)} of "
                          f"{s.where}) has the status of `{text(node.children[0])}`, 0, whatever its command "
                          "returns; assign first, then export", obj=s.obj)
                continue
            if node.type != "pipeline" or "pipefail" in options or _skipped(node):
                continue
            shown = " ".join(text(node).split())[:80]
            if "e" in options:
                yield Hit(s.path, f"{s.obj.kind} {s.obj.name}: under set -e without pipefail, `{shown}` (script line "
                          f"{s.line_of(node)} of {s.where}) succeeds when its first command fails", obj=s.obj)
            elif last is not None and node.start_byte == last.start_byte and node.end_byte == last.end_byte:
                yield Hit(s.path, f"{s.obj.kind} {s.obj.name}: the exit status of {s.where} is that of the last "
                          f"command of `{shown}` (script line {s.line_of(node)}); a failure before the pipe is "
                          "reported as success", obj=s.obj)


def _runs_command(declaration) -> bool:
    if text(declaration.children[0]) not in DECLARATIONS:
        return False
    return any(n.type == "command_substitution" for a in declaration.named_children
               if a.type == "variable_assignment" for n in walk(a))


def _checked(node) -> bool:
    """A non-final member of an `&&` / `||` list: its status is what the script tests."""
    parent = node.parent
    return parent is not None and parent.type == "list" and parent.children[0] == node


def _skipped(pipeline) -> bool:
    if in_condition(pipeline):
        return True
    parent = pipeline.parent
    while parent is not None:
        if parent.type in ("command_substitution", "process_substitution"):
            return True
        parent = parent.parent
    members = [c for c in pipeline.named_children if c.type != "comment"]
    if members and command_name(members[-1]) in MATCHERS:
        return True  # `fetch | grep ok` tests the output: a failed fetch prints nothing, and grep then fails too
    if members and _prints_only(members[0]) and all(command_name(c) in FILTERS for c in members[1:-1]):
        return True  # `env | grep NCCL_ | sort`: a listing; a filter that matches nothing hides no failed work
    return all(command_name(c) in HARMLESS_PRODUCERS for c in members[:-1])


# Programs that, given no arguments, only print what the process knows: `env | grep NCCL` lists variables.
PRINTERS = frozenset({"env", "printenv", "hostname", "date", "id", "whoami", "uname"})
FILTERS = frozenset({"grep", "egrep", "fgrep", "sort", "uniq", "head", "tail", "cut", "tr", "sed", "awk", "wc"})


def _prints_only(node) -> bool:
    return command_name(node) in PRINTERS and not command_words(node)


def _last_statement(root):
    named = [c for c in root.named_children if c.type != "comment"]
    return named[-1] if named else None
