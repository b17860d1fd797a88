"""GRPO870 unpinned-install."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..finding import Hit, Severity
from ..shell import commands_in, pip_install_words, scripts
from ._objects import literal_env
from ._runtime_env import runtime_env_packages

CODE = "GRPO870"
NAME = "unpinned-install"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = ("A pod script pip-installs a package without an exact version (`pip install torch`, `peft>=0.11`, "
           "`torch==2.*`, `git+https://…@main`).")
DOC = """## What it does
Reads every `pip install` (also `pip3`, `python -m pip`, `uv pip`) in pod scripts (`sh -c` entrypoints, probes,
hooks) and RayJob entrypoints, and the `pip` / `uv` packages of a Ray runtime env (a RayJob's `runtimeEnvYAML`, each
application of a RayService's `serveConfigV2`), which Ray installs when the workers start. Each requirement must
name an exact version (`torch==2.13.0`), a commit or a file (`pkg @ git+https://…@<commit>`, a `.whl`, a local
path). A bare name, a range (`>=`, `~=`, `<`), a wildcard (`torch==2.*`: pip reads it as a range) and a VCS install
at a branch or tag (`git+https://…@main`, `…@v1.2`, or no `@` at all: whatever the default branch holds) are
reported; a VCS ref must be a commit hash. A requirement held in a variable is read from the container's literal env
(`pip install $EXTRA` with `EXTRA: torch==2.*`); one set elsewhere is skipped. Requirements files (`-r`),
constraints (`-c`) and editable installs (`-e`) are not read, nor is `pip` itself (`pip install -U pip`: the
installer, not a library).

## Why is this bad?
An install at pod start resolves whatever the index serves that day: two pods of one run, or a rerun a week later,
get different libraries. The predecessor's driver and utility pods installed `torch`, `datasets`, `huggingface_hub`
unpinned at start-up; no run recorded what it had resolved, so no result could be reproduced.

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
# A VCS requirement (`git+https://…`, `pkg @ hg+ssh://…`): pinned only by a commit hash after the last `@`.
VCS = re.compile(r"(^|@\s*)(git|hg|svn|bzr)\+[a-z]+://", re.IGNORECASE)
VCS_COMMIT = re.compile(r"@([0-9a-f]{7,40})(#.*)?$", re.IGNORECASE)
WILDCARD = re.compile(r"==[^=;]*\*")


# `pip install -U pip`: the installer upgrading itself decides no library a program imports.
INSTALLER = "pip"


def unpinned(words: list[str]) -> list[str]:
    """The requirements among pip install's arguments that name no exact version."""
    out, skip = [], False
    for raw in _joined_direct_references(words):
        word = raw.strip("'\"")
        if skip:
            skip = False
            continue
        if word.startswith("-"):
            option = word.split("=", 1)[0]
            skip = "=" not in word and (option in VALUE_OPTIONS or option in UNREAD_OPTIONS)
            continue
        if "$" in word or not word or word.lower() == INSTALLER:
            continue
        if VCS.search(word):
            if not VCS_COMMIT.search(word.split("://", 1)[1]):
                out.append(word)
            continue
        if WILDCARD.search(word) or not (PINNED.search(word) or FILE_LIKE.search(word)):
            out.append(word)
    return out


def _joined_direct_references(words: list[str]) -> list[str]:
    """`pkg @ git+https://…` written unquoted is three words: one requirement."""
    out: list[str] = []
    i = 0
    while i < len(words):
        if i + 2 < len(words) and words[i + 1] == "@" and not words[i].startswith("-"):
            out.append(f"{words[i]} @ {words[i + 2]}")
            i += 3
            continue
        out.append(words[i])
        i += 1
    return out


ENV_REFERENCE = re.compile(r"^[\"']?\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?[\"']?$")


def _expanded(words: list[str], env: dict[str, str]) -> list[str]:
    """Words with `$NAME` replaced by the words of NAME's literal value in the container's env."""
    out: list[str] = []
    for word in words:
        m = ENV_REFERENCE.match(word)
        out += env[m.group(1)].split() if m and m.group(1) in env else [word]
    return out


def check(ctx) -> Iterator[Hit]:
    for s in scripts(ctx):
        env = literal_env(s.container) if isinstance(s.container, dict) else {}
        for node in commands_in(s.root):
            words = pip_install_words(node)
            loose = unpinned(_expanded(words, env)) if words is not None else []
            if loose:
                yield Hit(s.path, f"{s.obj.kind} {s.obj.name}: {s.where} installs {', '.join(loose)} without an "
                          f"exact version (script line {s.line_of(node)}); each start may resolve different "
                          "libraries", obj=s.obj)
    for o in ctx.objects:
        for field, key, packages in runtime_env_packages(o):
            loose = unpinned(packages)
            if loose:
                yield Hit(f"spec.{field}", f"{o.kind} {o.name}: its runtime env installs {', '.join(loose)} "
                          f"({key}) without an exact version when its workers start; each start may resolve "
                          "different libraries", obj=o)
