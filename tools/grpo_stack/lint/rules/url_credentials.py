"""GRPO202 url-credentials."""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import unquote

from ..finding import Hit, Severity
from .literal_secret import PLACEHOLDER, TOKEN_PATTERNS

CODE = "GRPO202"
NAME = "url-credentials"
SEVERITY = Severity.ERROR
CATEGORY = "security"
SUMMARY = "A URL carries a credential in its user-info (`https://user:pass@host/…`, `https://<token>@host/…`)."
DOC = """## What it does
Reads every string in the values and in every rendered or linted object (env values, args, ConfigMap data,
annotations; Secrets excepted: that is where such a URL belongs) for URLs of any scheme whose user-info holds a
credential: a password (`https://user:pass@host`, `redis://:pass@host`, `postgresql://u:p@db/x`) or a user
part that is itself a token (`https://hf_…@huggingface.co`, `https://ghp_…@github.com`, 20 or more characters).
A bare user name (`ssh://git@github.com`) is not a credential; a placeholder (`https://$(USER):$(PASS)@host`,
`${TOKEN}`, `<password>`) is filled in at run time and not reported. The same rule reads values and manifests.

## Why is this bad?
A URL is copied wherever its setting goes: `reward.url` reaches the Ray pods' environment and the job
ConfigMap, both readable by anyone with `get` on pods or ConfigMaps in the namespace, stored in etcd in clear,
and printed in logs and tracebacks that echo the URL.

## Example
```yaml
global:
  job:
    reward:
      url: https://scorer:s3cr3t-pass@rewards.example.com/score
```
Use instead:
```yaml
global:
  job:
    reward:
      url: https://rewards.example.com/score   # the credential in a Secret the client reads
```

## Fix
Drop the user-info from the URL and pass the credential from a Secret (`valueFrom.secretKeyRef`, or a header
the client reads from a mounted file); rotate the credential, which has already been written in clear.
"""

# scheme://user[:password]@host — user-info has no `/`, `?`, `#` or `@` (RFC 3986 3.2.1) and no whitespace.
URL_USERINFO = re.compile(r"\b([a-z][a-z0-9+.-]*)://([^\s/?#@'\"]*)@[^\s/?#@'\"]+", re.IGNORECASE)
LONG_USER = 20


def credential_in(text: str) -> tuple[str, str] | None:
    """(what credential a URL in `text` carries in its user-info: 'a password' or 'a token', that URL with its
    user-info masked), or None."""
    if "@" not in text or "://" not in text:
        return None  # no URL with user-info (most strings: the regex is not run)
    for m in URL_USERINFO.finditer(text):
        user, sep, password = m.group(2).partition(":")
        user, password = unquote(user), unquote(password)
        if sep and password and not _placeholder(password):
            return "a password", _masked(m)
        if user and not _placeholder(user) and (len(user) >= LONG_USER or any(
                rx.search(user) for rx in TOKEN_PATTERNS.values())):
            return "a token", _masked(m)
    return None


def _placeholder(part: str) -> bool:
    return bool(PLACEHOLDER.match(part) or re.fullmatch(r"\$\([A-Za-z_][A-Za-z0-9_]*\)", part))


def _masked(m: re.Match) -> str:
    """The URL (scheme, host and the path up to the first space or quote) with its user-info replaced by `…`: the
    URL itself, never the rest of a long string it sits in (a serve config, a script)."""
    rest = re.match(r"[^\s'\"]*", m.string[m.end():]).group(0)
    return f"{m.group(1)}://…@{m.group(0).rsplit('@', 1)[1]}{rest}"[:120]


def check(ctx) -> Iterator[Hit]:
    seen: set[str] = set()
    if ctx.has_values:
        for path, text in ctx.value_strings():
            found = credential_in(text)
            if found:
                seen.add(text)
                what, url = found
                yield Hit(path, f"the URL {url} carries {what} in its user-info; it reaches every pod "
                          "env and ConfigMap this setting is rendered into")
    for o in ctx.objects:
        if o.kind == "Secret":
            continue
        for path, text in ctx.object_strings(o):
            if path.startswith("metadata.") and not path.startswith("metadata.annotations"):
                continue
            found = credential_in(text)
            if found and not any(known in text for known in seen):
                what, url = found
                yield Hit(path, f"{o.kind} {o.name}: the URL {url} carries {what} in its user-info "
                          "(stored in clear in the object)", obj=o)
