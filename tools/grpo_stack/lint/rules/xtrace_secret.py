"""GRPO843 xtrace-secret."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity
from ..shell import command_name, scripts, set_changes, text, walk
from .literal_secret import NOT_SECRET_ENV, SENSITIVE_ENV

CODE = "GRPO843"
NAME = "xtrace-secret"
SEVERITY = Severity.ERROR
SUMMARY = "A pod script traces commands (`set -x`) while it expands a credential or sources an env file."
DOC = """## What it does
Tracks xtrace in every pod script (`bash -xc`, `set -x`, `set -o xtrace`, until `set +x`) and reports, while it
is on, every expansion of a credential — a variable named like one (`$HF_TOKEN`, `${WANDB_API_KEY}`: names with
TOKEN, SECRET, PASSWORD, KEY or CREDENTIAL) or one the container takes from a Secret (`secretKeyRef`, or
`envFrom` of a Secret in the set), whatever its name — and every `source`/`.` of a file, whose exports xtrace
prints one by one.

## Why is this bad?
xtrace writes each command with its variables expanded to stderr, which is the pod log: readable by anyone with
`get pods/log` and shipped to log stores. All six of the predecessor's download scripts ran `set -xeuo pipefail`
and then sourced `env_vars`, printing `HF_TOKEN` in clear text.

## Example
```yaml
args:
  - |
    set -xeuo pipefail
    huggingface-cli login --token "$HF_TOKEN"
```
Use instead:
```yaml
args:
  - |
    set -euo pipefail
    huggingface-cli download "$MODEL" --local-dir /fsx/models/x   # reads HF_TOKEN from the environment
```

## Fix
Drop `set -x`, or turn it on only after the secret is used (`set +x` around any later use).
"""


def _secret_names(ctx, container) -> set[str]:
    """Variables the container takes from a Secret: `secretKeyRef` env entries, and the keys of the set's Secrets
    it loads whole by `envFrom` (with their prefix)."""
    if not isinstance(container, dict):
        return set()
    out = {str(e.get("name")) for e in container.get("env") or []
           if isinstance(e, dict) and isinstance(e.get("valueFrom"), dict) and "secretKeyRef" in e["valueFrom"]}
    secrets = {o.name: o.obj for o in ctx.of_kind("Secret")}
    for source in container.get("envFrom") or []:
        ref = source.get("secretRef") if isinstance(source, dict) else None
        secret = secrets.get(ref.get("name")) if isinstance(ref, dict) else None
        if isinstance(secret, dict):
            keys = [*(secret.get("data") or {}), *(secret.get("stringData") or {})]
            out |= {f"{source.get('prefix') or ''}{k}" for k in keys}
    return out


def check(ctx) -> Iterator[Hit]:
    for s in scripts(ctx):
        from_secrets = _secret_names(ctx, s.container)
        tracing = "x" in s.invocation_options
        for node in walk(s.root):
            for opt, on in set_changes(node):
                if opt in ("x", "xtrace"):
                    tracing = on
            if not tracing:
                continue
            if command_name(node) in ("source", "."):
                yield Hit(s.path, f"{s.obj.kind} {s.obj.name}: {s.where} sources {_arg(node)} with xtrace on (script "
                          f"line {s.line_of(node)}); every export in it is printed to the pod log", obj=s.obj)
            elif node.type == "variable_name" and node.parent is not None and node.parent.type in (
                    "simple_expansion", "expansion"):
                name = text(node)
                if name in from_secrets or (SENSITIVE_ENV.search(name) and not NOT_SECRET_ENV.match(name)):
                    yield Hit(s.path, f"{s.obj.kind} {s.obj.name}: {s.where} expands ${name} with xtrace on (script "
                              f"line {s.line_of(node)}); its value is printed to the pod log", obj=s.obj)


def _arg(node) -> str:
    words = [text(c) for c in node.named_children if c.type != "command_name"]
    return words[0] if words else "a file"
