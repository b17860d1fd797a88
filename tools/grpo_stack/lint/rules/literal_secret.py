"""GRPO201 literal-secret."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..finding import Hit, Severity
from ._objects import containers

CODE = "GRPO201"
NAME = "literal-secret"
SEVERITY = Severity.ERROR
SUMMARY = "A credential is written as a literal value instead of a Secret reference."
DOC = """## What it does
Looks for credentials in two places: any string in the values that looks like a token (`hf_...`, `AKIA...`,
`ghp_...`, `sk-...`, `xox?-...`, a PEM private key), and any container env var whose name contains TOKEN,
SECRET, PASSWORD or KEY and that has a literal `value` instead of `valueFrom.secretKeyRef`. Rendered Secret
objects are reported too: the chart only ever references Secrets you create out of band.

## Why is this bad?
A literal in a pod spec is stored in etcd and readable by anyone with `get pod` in the namespace; on the
predecessor's sleep-infinity utility pod the HF token sat there for the life of the cluster.

## Example
```yaml
global:
  job:
    trainer:
      project: hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345
```
Use instead:
```yaml
global:
  secrets:
    hfToken: {name: hf-token, key: HF_TOKEN}
```

## Fix
Create the Secret out of band (`kubectl create secret generic hf-token --from-literal=HF_TOKEN=...`) and
reference it by name under `global.secrets`.
"""

TOKEN_PATTERNS = {
    "Hugging Face token": re.compile(r"\bhf_[A-Za-z0-9]{20,}\b"),
    "AWS access key id": re.compile(r"\b(AKIA|ASIA)[0-9A-Z]{16}\b"),
    "GitHub token": re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b"),
    "OpenAI-style API key": re.compile(r"\bsk-[A-Za-z0-9_-]{20,}\b"),
    "Slack token": re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b"),
    "private key": re.compile(r"-----BEGIN ([A-Z]+ )?PRIVATE KEY-----"),
}
SENSITIVE_ENV = re.compile(r"TOKEN|SECRET|PASSWORD|PASSWD|KEY|CREDENTIAL", re.IGNORECASE)
# Env names that contain KEY but hold no secret.
NOT_SECRET_ENV = re.compile(r"^(.*_)?(KEY_?PATH|KEY_FILE|PUBLIC_KEY|API_KEY_NAME|SECRET_NAME|TOKENIZER.*)$", re.I)


def check(ctx) -> Iterator[Hit]:
    seen: set[str] = set()
    if ctx.has_values:
        for path, text in ctx.value_strings():
            kind = _token_kind(text)
            if kind:
                seen.add(text)
                yield Hit(path, f"looks like a {kind} written in the values ({_mask(text)})")
    for o in ctx.of_kind("Secret"):
        if o.obj.get("data") or o.obj.get("stringData"):
            yield Hit("data", f"Secret {o.name} is rendered with its contents", obj=o)
    for o, pod_path, pod in ctx.pod_templates():
        for field, i, c in containers(pod):
            for j, env in enumerate(c.get("env") or []):
                name, value = env.get("name", ""), env.get("value")
                if value is None or value == "" or str(value) in seen:
                    continue
                if SENSITIVE_ENV.search(name) and not NOT_SECRET_ENV.match(name):
                    yield Hit(f"{pod_path}.{field}.{i}.env.{j}.value",
                              f"{o.kind} {o.name}: env {name} has a literal value; use valueFrom.secretKeyRef", obj=o)
                elif _token_kind(str(value)):
                    yield Hit(f"{pod_path}.{field}.{i}.env.{j}.value",
                              f"{o.kind} {o.name}: env {name} holds a {_token_kind(str(value))}", obj=o)


def _token_kind(text: str) -> str | None:
    return next((kind for kind, rx in TOKEN_PATTERNS.items() if rx.search(text)), None)


def _mask(text: str) -> str:
    return text[:5] + "…" if len(text) > 5 else "…"
