"""GRPO848 default-service-account-rbac."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..finding import Hit, Severity

CODE = "GRPO848"
NAME = "default-service-account-rbac"
SEVERITY = Severity.ERROR
CATEGORY = "security"
SUMMARY = "A RoleBinding or ClusterRoleBinding grants permissions to a namespace's `default` service account."
DOC = """## What it does
Reports every RoleBinding and ClusterRoleBinding with a subject `{kind: ServiceAccount, name: default}` (or its
user name `system:serviceaccount:<namespace>:default`), and every subject group `system:serviceaccounts` (all
service accounts).

## Why is this bad?
Every pod that names no service account runs as `default`: a sandbox, an eval job running model-written code,
a utility pod. Permissions granted to it are granted to all of them; give the one workload that needs the API
its own service account.

## Example
```yaml
kind: RoleBinding
subjects:
  - {kind: ServiceAccount, name: default, namespace: rl}
```
Use instead:
```yaml
kind: RoleBinding
subjects:
  - {kind: ServiceAccount, name: ray-submitter, namespace: rl}
```

## Fix
Create a dedicated ServiceAccount for the workload that needs the permissions and bind the role to it.
"""


def check(ctx) -> Iterator[Hit]:
    for o in ctx.of_kind("RoleBinding", "ClusterRoleBinding"):
        subjects = o.obj.get("subjects")
        for i, s in enumerate(subjects if isinstance(subjects, list) else []):
            if not isinstance(s, dict):
                continue
            role = (o.obj.get("roleRef") or {}).get("name", "?") if isinstance(o.obj.get("roleRef"), dict) else "?"
            if s.get("kind") == "ServiceAccount" and s.get("name") == "default":
                # a RoleBinding's subject with no namespace is its own namespace's account (rbac authorizer)
                where = s.get("namespace") or (o.obj.get("metadata") or {}).get("namespace") or ctx.namespace
                yield Hit(f"subjects.{i}", f"{o.kind} {o.name} grants {role} to the default service account of "
                          + (f"namespace {where}" if where else "the namespace it is applied to"), obj=o)
            elif s.get("kind") == "User" and re.fullmatch(r"system:serviceaccount:[^:]+:default", str(s.get("name"))):
                yield Hit(f"subjects.{i}", f"{o.kind} {o.name} grants {role} to the default service account "
                          f"({s.get('name')})", obj=o)
            elif s.get("kind") == "Group" and str(s.get("name", "")).startswith("system:serviceaccounts"):
                yield Hit(f"subjects.{i}", f"{o.kind} {o.name} grants {role} to every service account "
                          f"({s.get('name')})", obj=o)
