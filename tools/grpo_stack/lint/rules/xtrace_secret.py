"""GRPO843 xtrace-secret."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity
from ..shell import SHELLS, command_name, command_words, scripts, set_changes, text, walk
from ._objects import containers
from .literal_secret import NOT_SECRET_ENV, SENSITIVE_ENV

CODE = "GRPO843"
NAME = "xtrace-secret"
SEVERITY = Severity.ERROR
CATEGORY = "security"
SUMMARY = ("A pod script traces commands (`set -x`, `bash -x script.sh`) while it expands a credential, sources an "
           "env file or holds a secret in its environment.")
DOC = """## What it does
Tracks xtrace in every pod script (`bash -xc`, `set -x`, `set -o xtrace`, until `set +x`) and reports, while it
is on, every expansion of a credential — a variable named like one (`$HF_TOKEN`, `${WANDB_API_KEY}`: names with
TOKEN, SECRET, PASSWORD, KEY or CREDENTIAL) or one the container takes from a Secret (`secretKeyRef`, or
`envFrom` of a Secret in the set), whatever its name — and every `source`/`.` of a file, whose exports xtrace
prints one by one. A script file run traced (`bash -x /opt/run.sh` as the container's command, or inside a
script; `sh -xe file`) cannot be read here: it is reported when the container's environment holds a secret
(`secretKeyRef`, `envFrom` of any Secret, or a literal env named like a credential), which any expansion in
the file prints.

## Why is this bad?
xtrace writes each command with its variables expanded to stderr, which is the pod log: readable by anyone with
`get pods/log` and shipped to log stores. All six of the predecessor's download scripts ran `set -xeuo pipefail`
and then sourced `env_vars`, printing `HF_TOKEN` in clear text.

## Example
```yaml
args:
  - |
    set -xeuo pipefail
    hf auth login --token "$HF_TOKEN"
```
Use instead:
```yaml
args:
  - |
    set -euo pipefail
    hf download "$MODEL" --revision "$COMMIT" --local-dir /fsx/models/x   # reads HF_TOKEN from the environment
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


def _traced_file(argv: list) -> tuple[int, str] | None:
    """(index, script file) when argv is `SHELL [flags incl. x] FILE …` (not `-c`), else None."""
    if not argv or not isinstance(argv[0], str) or argv[0].rsplit("/", 1)[-1] not in SHELLS:
        return None
    traced, i = False, 1
    while i < len(argv) and isinstance(argv[i], str) and argv[i].startswith("-") and argv[i] != "--":
        flag = argv[i]
        if flag == "-o" and i + 1 < len(argv):
            traced |= argv[i + 1] == "xtrace"
            i += 2
            continue
        if not flag.startswith("--"):
            if "c" in flag[1:]:
                return None
            traced |= "x" in flag[1:]
        i += 1
    i += 1 if i < len(argv) and argv[i] == "--" else 0
    return (i, str(argv[i])) if traced and i < len(argv) else None


def _env_secrets(container) -> list[str]:
    """What in the container's environment is a secret: secretKeyRef names, `envFrom` Secrets, literal
    credential-named env."""
    if not isinstance(container, dict):
        return []
    out = []
    for e in container.get("env") or []:
        if not isinstance(e, dict):
            continue
        name = str(e.get("name", ""))
        from_secret = isinstance(e.get("valueFrom"), dict) and "secretKeyRef" in e["valueFrom"]
        if from_secret or (SENSITIVE_ENV.search(name) and not NOT_SECRET_ENV.match(name) and e.get("value")):
            out.append(name)
    for source in container.get("envFrom") or []:
        ref = source.get("secretRef") if isinstance(source, dict) else None
        if isinstance(ref, dict):
            out.append(f"the Secret {ref.get('name')}")
    return out


def _traced_files(ctx) -> Iterator[Hit]:
    for o, pod_path, pod in ctx.pod_templates():
        for field, i, c in containers(pod):
            secrets = _env_secrets(c)
            if not secrets:
                continue
            command = c.get("command") if isinstance(c.get("command"), list) else []
            args = c.get("args") if isinstance(c.get("args"), list) else []
            found = _traced_file([*command, *args])
            if found:
                at, file = found
                where = (f"{pod_path}.{field}.{i}.command.{at}" if at < len(command)
                         else f"{pod_path}.{field}.{i}.args.{at - len(command)}")
                yield Hit(where, f"{o.kind} {o.name}: container {c.get('name', i)} runs {file} traced (-x) with "
                          f"{', '.join(secrets[:3])} in its environment; any expansion of it is printed to the pod "
                          "log", obj=o)


def check(ctx) -> Iterator[Hit]:
    yield from _traced_files(ctx)
    for s in scripts(ctx):
        env_secrets = _env_secrets(s.container)
        from_secrets = _secret_names(ctx, s.container)
        tracing = "x" in s.invocation_options
        for node in walk(s.root):
            if env_secrets and command_name(node) in SHELLS:
                found = _traced_file([command_name(node), *command_words(node)])
                if found:
                    file = found[1]
                    yield Hit(s.path, f"{s.obj.kind} {s.obj.name}: {s.where} runs {file} traced (-x) (script line "
                              f"{s.line_of(node)}) with {', '.join(env_secrets[:3])} in its environment; any "
                              "expansion of it is printed to the pod log", obj=s.obj)
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
