"""GRPO811 no-privilege-escalation."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity
from ._podsecurity import all_containers, folded, is_privileged, pod_label, where

CODE = "GRPO811"
NAME = "no-privilege-escalation"
SEVERITY = Severity.ERROR
CATEGORY = "hardening"
SUMMARY = "A container may gain privileges (allowPrivilegeEscalation is not false)."
DOC = """## What it does
Requires `securityContext.allowPrivilegeEscalation: false` on every container of every pod template,
RayCluster groups included. Privileged containers are left to GRPO815 and GRPO801 (they hold every privilege).

## Why is this bad?
Unless it is false, a process can gain more privileges than its parent (setuid binaries, file capabilities):
the no_new_privs bit stays off. The Ray pods run model code paths (reward functions, rollouts) as root.

## Example
```yaml
containers:
  - name: ray-worker
    securityContext: {}
```
Use instead:
```yaml
    securityContext:
      allowPrivilegeEscalation: false
```

## Fix
Set `allowPrivilegeEscalation: false` on the container's securityContext.
"""


def check(ctx) -> Iterator[Hit]:
    return iter(()) if folded(ctx) else hits(ctx)


def hits(ctx) -> Iterator[Hit]:
    """Every pod template's findings, whatever the mode (GRPO809 folds them per pod in manifest mode)."""
    for o, pod_path, pod in ctx.pod_templates():
        for field, i, c in all_containers(pod):
            if is_privileged(c):
                continue
            sc = c.get("securityContext")
            if (sc or {}).get("allowPrivilegeEscalation") is not False:
                path = f"{where(pod_path, field, i)}.securityContext" if sc else where(pod_path, field, i)
                yield Hit(path, f"{pod_label(o, pod_path)}: container {c.get('name')} does not set "
                          "allowPrivilegeEscalation: false", obj=o)
