"""GRPO849 utility-pod-readiness."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..finding import Hit, Severity
from ..shell import command_name, command_words, commands_in, scripts, text

CODE = "GRPO849"
NAME = "utility-pod-readiness"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "A utility pod sets itself up and then idles, but has no readiness probe: it is Ready before set-up ends."
DOC = """## What it does
Finds containers whose shell entrypoint does some set-up (installs, downloads, copies) and then idles —
its last command is `sleep infinity` (or a sleep of a day or more, `sleep 365d`), `tail -f /dev/null` or a
`while true; do sleep …; done` loop — and requires a `readinessProbe` on them (a file the script writes after
set-up, tested by the probe). Set-up means a command that installs, downloads, copies or unpacks (pip, apt-get,
curl, wget, git, cp, tar, huggingface-cli, aws, python, ...); a script that only checks or prints (ping, echo,
test) before idling has nothing to wait for. A DaemonSet's node agent is not judged (nobody execs into it); in a
batch workload (a Job, CronJob, JobSet or any `*Job` resource) only installs, downloads and copies count as
set-up: one that runs its program and then idles keeps the pod for a look at the output.

## Why is this bad?
Such a pod is what people `kubectl wait` on and `kubectl exec` into. Without a readiness probe it reports Ready
the moment the container starts, while the set-up is still running or has failed: the predecessor's fsx-utils
pod was Ready while its `pip install` was still in progress, and the staging commands exec'd into it failed
with missing modules.

## Example
```yaml
command: ["bash", "-c"]
args: ["set -euo pipefail; pip install --no-cache-dir huggingface_hub==0.36.0; sleep infinity"]
```
Use instead:
```yaml
command: ["bash", "-c"]
args: ["set -euo pipefail; pip install --no-cache-dir huggingface_hub==0.36.0; touch /tmp/ready; sleep infinity"]
readinessProbe:
  exec: {command: ["test", "-f", "/tmp/ready"]}
```

## Fix
Write a marker file at the end of set-up and add a readinessProbe that tests it (or bake the set-up into the
image).
"""


def check(ctx) -> Iterator[Hit]:
    for s in scripts(ctx):
        if not s.where.startswith("container ") or s.obj.kind == "DaemonSet":
            continue
        statements = [c for c in s.root.named_children if c.type != "comment"]
        if len(statements) < 2 or not _idles(statements[-1]):
            continue
        # a batch workload idling after running its program keeps the pod for a look at the output: only the
        # installs, downloads and copies of a helper are set-up someone waits for there
        setup = SETUP - PROGRAMS if _batch(s.obj.kind) else SETUP
        if not any(_sets_up(c, setup) for c in statements[:-1]):
            continue  # nothing to wait for: it checks or prints, then idles
        container = _container(s)
        if container is not None and not container.get("readinessProbe"):
            yield Hit(s.path, f"{s.obj.kind} {s.obj.name}: {s.where} sets itself up and then idles, without a "
                      "readinessProbe; it is Ready before its set-up has finished or failed", obj=s.obj)


def _batch(kind: str) -> bool:
    return kind in ("Job", "CronJob", "JobSet") or kind.endswith("Job")


DAY = 86_400
UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": DAY}


def _forever(words: list[str]) -> bool:
    """`sleep infinity`, or a sleep of a day or more (`sleep 365d`, `sleep 999999`): the container only idles."""
    if words in (["infinity"], ["inf"]):
        return True
    total = 0.0
    for w in words:
        m = re.fullmatch(r"(\d+(?:\.\d+)?)([smhd]?)", w)
        if not m:
            return False
        total += float(m.group(1)) * UNIT_SECONDS[m.group(2)]
    return bool(words) and total >= DAY


def _idles(node) -> bool:
    words = text(node).split()
    if command_name(node) == "sleep" and _forever(command_words(node)):
        return True
    if words[:2] == ["exec", "sleep"] and _forever(words[2:]):
        return True
    if words[:3] == ["tail", "-f", "/dev/null"] or words[:2] == ["exec", "sleep"] and words[2:3] == ["infinity"]:
        return True
    return node.type == "while_statement" and text(node.child_by_field_name("condition")).strip(" ;") in (
        "true", ":") and "sleep" in text(node)


# Commands that install, download, copy or unpack: the set-up a pod's users wait for.
SETUP = frozenset({"pip", "pip3", "uv", "conda", "mamba", "micromamba", "apt", "apt-get", "yum", "dnf", "apk",
                   "npm", "curl", "wget", "git", "cp", "rsync", "tar", "unzip", "huggingface-cli", "hf", "aws",
                   "gsutil", "s5cmd", "mv", "ln", "install", "python", "python3"})
# Interpreters: a set-up step in a helper pod, but a batch job's own work when a Job runs them.
PROGRAMS = frozenset({"python", "python3"})


def _sets_up(node, setup: frozenset[str] = SETUP) -> bool:
    """Whether the statement runs a set-up command anywhere inside it (loops and conditions included)."""
    return any(command_name(c) in setup for c in commands_in(node))


def _container(script):
    parts = script.path.split(".")
    node = script.obj.obj
    # the path runs ...containers.<i>.(command|args).<j>: the container is two segments above the list
    for part in parts[:-2]:
        node = node.get(part) if isinstance(node, dict) else (node[int(part)] if isinstance(node, list) else None)
        if node is None:
            return None
    return node if isinstance(node, dict) else None
