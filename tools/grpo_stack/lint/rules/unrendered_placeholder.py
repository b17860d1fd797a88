"""GRPO851 unrendered-placeholder."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..context import walk_strings
from ..finding import Hit, Severity

CODE = "GRPO851"
NAME = "unrendered-placeholder"
SEVERITY = Severity.ERROR
SUMMARY = "A manifest still holds a template placeholder (`${NAMESPACE}`, `{{ .Values.x }}`) that nothing expands."
DOC = """## What it does
In manifest mode, finds template syntax that was meant to be rendered before `kubectl apply`:

- Helm/Go template actions naming Helm objects or functions (`{{ .Values.x }}`, `{{ .Release.Namespace }}`,
  `{{ include "x" . }}`), anywhere;
- envsubst placeholders (`${NAMESPACE}`, `$NAMESPACE`) in fields nothing expands: names, namespaces, labels,
  images, env values, exec-form `command`/`args`, volumes, selectors. Kubernetes expands only `$(VAR)`, and only
  in `command`, `args` and `env[].value`; a `$(VAR)` anywhere else is reported too.

- the marks of a variable envsubst expanded to nothing (it was unset, and envsubst has no error for that): an
  image reference with an empty part (`/rl/trainer:1.2.3`, `registry//trainer`, `trainer:`), a URL host with an
  empty label (`http://scorer..svc.cluster.local`, `http://:8080`).

Not reported: shell scripts run by `sh -c` (the shell expands them), ConfigMap and Secret data (files a
program may template at start-up), and annotations (other tools' templates).

## Why is this bad?
An envsubst template applied without envsubst creates objects named `${NAMESPACE}`-something, or fails on
`metadata.namespace: ${NAMESPACE}`; in an env value the container receives the literal text `${REWARD_URL}` and
fails at the first request, far from the cause.

## Example
```yaml
env:
  - name: SANDBOX_URL
    value: http://sandbox.${NAMESPACE}.svc.cluster.local:8080
```
Use instead:
```yaml
env:
  - name: SANDBOX_URL
    value: http://sandbox.verl.svc.cluster.local:8080
```

## Fix
Render the manifest first (`envsubst < x.yaml`, `helm template`) and lint the output; to pass a pod's own
values, use `$(VAR)` in `command`/`args`/`env` or the downward API.
"""

HELM = re.compile(r"\{\{-?\s*(?:\.(?:Values|Release|Chart|Capabilities|Files|Template)\b|(?:include|template|"
                  r"toYaml|tpl|required|default|quote|printf|lookup)\b)[^}]*\}\}")
ENVSUBST = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*(?:[:]?[-=?+][^}]*)?\}|\$[A-Z_][A-Z0-9_]*\b")
KUBE_EXPANSION = re.compile(r"\$\([A-Za-z_][A-Za-z0-9_]*\)")
DATA_KINDS = ("ConfigMap", "Secret")
# An image reference whose registry, repository or tag was an unset variable: `/x`, `a//b`, `a:`, `a@`, `:tag`.
EMPTY_IMAGE_PART = re.compile(r"^[/:@]|//|[:@]$")
# (file:/// has an empty host by design: only network schemes are read.)
EMPTY_URL_HOST = re.compile(r"\b(?:https?|grpcs?|wss?|redis|s3)://(?:[:/.]|[^/\s]*\.\.)")


def check(ctx) -> Iterator[Hit]:
    if ctx.has_values:  # our own chart renders every template; values mode lints the rendered output
        return
    from ..shell import scripts

    shell = {(id(s.obj), s.path) for s in scripts(ctx)}
    for o in ctx.objects:
        for path, text in walk_strings(o.obj):
            if "$" not in text and "{{" not in text:
                if not _free_text(o.kind, path) and (id(o), path) not in shell:
                    yield from _expanded_empty(o, path, text)
                continue
            m = HELM.search(text)
            if m:
                yield Hit(path, f"{o.kind} {o.name}: unrendered Helm template {m.group(0)!r}", obj=o)
                continue
            if (id(o), path) in shell or _free_text(o.kind, path):
                continue
            m = ENVSUBST.search(text)
            if m:
                yield Hit(path, f"{o.kind} {o.name}: unrendered placeholder {m.group(0)!r}; nothing expands it "
                          "here (Kubernetes expands only $(VAR) in command, args and env values)", obj=o)
                continue
            m = KUBE_EXPANSION.search(text)
            if m and not _kube_expands(path):
                yield Hit(path, f"{o.kind} {o.name}: {m.group(0)!r} is expanded only in command, args and env "
                          "values; here it stays literal", obj=o)


def _expanded_empty(o, path: str, text: str) -> Iterator[Hit]:
    parts = path.split(".")
    if len(parts) >= 3 and parts[-1] == "image" and parts[-3] in ("containers", "initContainers"):
        if EMPTY_IMAGE_PART.search(text.strip()):
            yield Hit(path, f"{o.kind} {o.name}: image {text!r} has an empty part, the mark of a variable "
                      "envsubst expanded to nothing (unset when the template was rendered)", obj=o)
    elif EMPTY_URL_HOST.search(text):
        yield Hit(path, f"{o.kind} {o.name}: {text[:80]!r} has a URL host with an empty label, the mark of a "
                  "variable envsubst expanded to nothing (unset when the template was rendered)", obj=o)


def _free_text(kind: str, path: str) -> bool:
    """Strings some other program may template: ConfigMap/Secret data, annotations."""
    parts = path.split(".")
    if kind in DATA_KINDS and parts[0] in ("data", "stringData", "binaryData"):
        return True
    return "annotations" in parts


def _kube_expands(path: str) -> bool:
    parts = path.split(".")
    return (len(parts) >= 2 and parts[-2] in ("command", "args")) or (
        len(parts) >= 3 and parts[-1] == "value" and parts[-3] == "env")
