"""GRPO877 ingress-rewrite-collapses."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..finding import Hit, Severity
from ._objects import mapping

CODE = "GRPO877"
NAME = "ingress-rewrite-collapses"
SEVERITY = Severity.WARNING
CATEGORY = "correctness"
SUMMARY = ("An ingress-nginx rewrite target without a capture group sends every request under a prefix path to "
           "one URI.")
DOC = """## What it does
Reads every Ingress with the annotation `nginx.ingress.kubernetes.io/rewrite-target` whose value refers to no
capture group (`/`, `/app`: no `$1`, `$2`) and reports each of its paths that matches more than one URI (`pathType`
`Prefix` or `ImplementationSpecific`; an `Exact` path matches one), on an Ingress of no class or of a class that
names nginx (other controllers ignore the annotation). A warning: it assumes the backend serves more
than the one path the target names (a single-page app that answers every path from `/` is unharmed).

## Why is this bad?
Since ingress-nginx 0.22.0 the rewrite target replaces the whole request URI, and the parts of it to keep must be
captured by the path and named in the target (the documented pattern: `path: /api(/|$)(.*)`, `rewrite-target:
/$2`). With a target of `/` and a path of `/` or `/api`, `GET /api/v1/chat/completions` reaches the backend as
`GET /`: every API route, the docs page and the health check answer as the root does, or 404, with no error in
the Ingress.

## Example
```yaml
metadata:
  annotations: {nginx.ingress.kubernetes.io/rewrite-target: /}
spec:
  rules:
    - http:
        paths:
          - {path: /api, pathType: Prefix, backend: {service: {name: api, port: {number: 8000}}}}
```
Use instead:
```yaml
metadata:
  annotations:
    nginx.ingress.kubernetes.io/use-regex: "true"
    nginx.ingress.kubernetes.io/rewrite-target: /$2
spec:
  rules:
    - http:
        paths:
          - path: /api(/|$)(.*)
            pathType: ImplementationSpecific
            backend: {service: {name: api, port: {number: 8000}}}
```

## Fix
Capture the part of the path to keep and name it in the target (`/$2`), or drop the annotation where the backend
serves the paths as they arrive.
"""

REWRITE = "nginx.ingress.kubernetes.io/rewrite-target"
CAPTURE = re.compile(r"\$\{?\d")


def _nginx(o, annotations: dict) -> bool:
    """The Ingress is (or may be) ingress-nginx's: no class named, or one that names nginx; another controller
    ignores the annotation."""
    named = mapping(o.obj.get("spec")).get("ingressClassName") or annotations.get("kubernetes.io/ingress.class")
    return not isinstance(named, str) or "nginx" in named.lower()


def check(ctx) -> Iterator[Hit]:
    for o in ctx.of_kind("Ingress"):
        annotations = mapping(mapping(o.obj.get("metadata")).get("annotations"))
        target = annotations.get(REWRITE)
        if not isinstance(target, str) or not target.strip() or CAPTURE.search(target) or not _nginx(o, annotations):
            continue
        rules = mapping(o.obj.get("spec")).get("rules")
        for i, rule in enumerate(rules if isinstance(rules, list) else []):
            paths = mapping(mapping(rule).get("http")).get("paths")
            for j, p in enumerate(paths if isinstance(paths, list) else []):
                p = mapping(p)
                path = p.get("path") if isinstance(p.get("path"), str) else "/"
                if p.get("pathType") == "Exact":
                    continue
                yield Hit(f"spec.rules.{i}.http.paths.{j}", f"Ingress {o.name} rewrites every request under {path} "
                          f"to {target}: its rewrite-target names no capture group (such as /$2), so "
                          f"{path.rstrip('/')}/anything reaches the backend as {target} (assumed: the backend serves "
                          f"more than {target})", obj=o)
