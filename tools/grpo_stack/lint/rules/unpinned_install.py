"""GRPO870 unpinned-install."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..finding import Hit, Severity
from ..shell import command_name, command_words, commands_in, scripts

CODE = "GRPO870"
NAME = "unpinned-install"
SEVERITY = Severity.ERROR
SUMMARY = "A pod script pip-installs a package without an exact version (`pip install torch`, `peft>=0.11`)."
DOC = """## What it does
Reads every `pip install` (also `pip3`, `python -m pip`, `uv pip`) in pod scripts (`sh -c` entrypoints, probes,
hooks) and RayJob entrypoints. Each requirement must name an exact version (`torch==2.13.0`), a commit or a
file (`pkg @ git+https://…@<commit>`, a `.whl`, a local path). A bare name or a range (`>=`, `~=`, `<`) is
reported. Requirements files (`-r`), constraints (`-c`) and editable installs (`-e`) are not read; a requirement
held in a variable is skipped.

## Why is this bad?
An install at pod start resolves whatever the index serves that day: two pods of one run, or a rerun a week
later, get different libraries. The predecessor's driver and utility pods installed `torch`, `datasets`,
`huggingface_hub` unpinned at start-up; no run recorded what it had resolved, so no result could be reproduced.

## Example
```yaml
args: ["pip install --no-cache-dir datasets huggingface_hub && exec sleep infinity"]
```
Use instead:
```yaml
args: ["pip install --no-cache-dir datasets==4.4.1 huggingface_hub==0.36.0 && exec sleep infinity"]
```

## Fix
Pin every requirement with `==` (or bake the dependencies into the image).
"""

# pip options that take a value (the next word is not a requirement).
VALUE_OPTIONS = frozenset({
    "-i", "--index-url", "--extra-index-url", "-f", "--find-links", "--trusted-host", "-t", "--target",
    "--prefix", "--root", "--src", "--upgrade-strategy", "--platform", "--python-version", "--implementation",
    "--abi", "--only-binary", "--no-binary", "--progress-bar", "--log", "--cache-dir", "--report", "--python",
    "--config-settings", "-C", "--global-option", "--timeout", "--retries", "--proxy", "--cert", "--client-cert",
    "--exists-action", "--keyring-provider", "--index-strategy", "--extra-index", "--default-index",
})
# Options whose value is a file or project this rule cannot read.
UNREAD_OPTIONS = frozenset({"-r", "--requirement", "-c", "--constraint", "-e", "--editable", "--group"})
PINNED = re.compile(r"===?|@")
FILE_LIKE = re.compile(r"^(\.{0,2}/|[a-z][a-z0-9+.-]*://)|\.(whl|tar\.gz|zip)$", re.IGNORECASE)


def _install_words(node) -> list[str] | None:
    """The words after `install` when this command is a pip install, else None."""
    name, words = command_name(node), command_words(node)
    if name in ("pip", "pip3") or re.fullmatch(r"pip3\.\d+", name):
        rest = words
    elif re.fullmatch(r"python[0-9.]*", name) and words[:2] == ["-m", "pip"]:
        rest = words[2:]
    elif name == "uv" and words[:1] == ["pip"]:
        rest = words[1:]
    else:
        return None
    return rest[1:] if rest[:1] == ["install"] else None


def unpinned(words: list[str]) -> list[str]:
    """The requirements among pip install's arguments that name no exact version."""
    out, skip = [], False
    for raw in words:
        word = raw.strip("'\"")
        if skip:
            skip = False
            continue
        if word.startswith("-"):
            option = word.split("=", 1)[0]
            skip = "=" not in word and (option in VALUE_OPTIONS or option in UNREAD_OPTIONS)
            continue
        if "$" in word or not word or PINNED.search(word) or FILE_LIKE.search(word):
            continue
        out.append(word)
    return out


def check(ctx) -> Iterator[Hit]:
    for s in scripts(ctx):
        for node in commands_in(s.root):
            words = _install_words(node)
            loose = unpinned(words) if words is not None else []
            if loose:
                yield Hit(s.path, f"{s.obj.kind} {s.obj.name}: {s.where} installs {', '.join(loose)} without an "
                          f"exact version (script line {s.line_of(node)}); each start may resolve different "
                          "libraries", obj=s.obj)
