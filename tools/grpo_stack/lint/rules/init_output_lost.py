"""GRPO623 init-output-lost."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity
from ..shell import command_name, command_words, commands_in, pip_install_words, scripts

CODE = "GRPO623"
NAME = "init-output-lost"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = ("An init container's output never reaches the main containers: it installs into its own filesystem, "
           "or writes a scratch volume no other container mounts.")
DOC = """## What it does
Checks every init container of a pod template (Deployments, Jobs, Ray groups, JobSets and the rest):
- a package install in its script (`pip install`, `uv pip install`, `conda install`, `apt-get install`, ...) with
  no target directory on a volume a main container also mounts (`pip install --target`/`--prefix`/`--root`,
  `conda install -p`): it installs into the init container's own root filesystem, which ends with it. An
  editable install (`pip install -e /shared/src`) counts too: its link file is written to the init container's
  site-packages, not to the shared source tree. An install that the init container's own script goes on to use
  (it runs anything after it but bookkeeping: `echo`, `mkdir`, `cp`...) is its own tooling, not reported;
- an `emptyDir` volume it mounts writable that no main container mounts: whatever it writes there is discarded.

## Why is this bad?
Each container of a pod has its own root filesystem; only volumes are shared. An init step that installs or
prepares something outside a shared volume succeeds, and the main container starts without it: imports fail,
or (worse) an older copy baked into the image is used silently.

## Example
```yaml
initContainers:
  - name: setup
    command: ["bash", "-c", "cd /data/verl && pip install --no-deps -e ."]
    volumeMounts: [{name: data, mountPath: /data}]
```
Use instead:
```yaml
initContainers:
  - name: setup
    command: ["bash", "-c", "pip install --no-deps --target /data/site /data/verl"]
    volumeMounts: [{name: data, mountPath: /data}]
containers:
  - name: worker
    env: [{name: PYTHONPATH, value: /data/site}]
    volumeMounts: [{name: data, mountPath: /data}]
```

## Fix
Install into a directory on a volume the main container mounts (and put it on its PYTHONPATH or PATH), or bake
the package into the image; mount every scratch volume an init container fills into the container that reads it.
"""

PIP_TARGETS = {"--target", "-t", "--prefix", "--root"}
INSTALLERS = {"apt-get": "install", "apt": "install", "yum": "install", "dnf": "install", "apk": "add",
              "conda": "install", "mamba": "install", "micromamba": "install"}


def _install(node) -> tuple[str, list[str]] | None:
    """(installer, words after the install verb) for a package install, else None."""
    pip = pip_install_words(node)
    if pip is not None:
        return "pip", pip
    name, words = command_name(node), command_words(node)
    if name in INSTALLERS and INSTALLERS[name] in words:
        return name, words[words.index(INSTALLERS[name]) + 1:]
    return None


def _targets(installer: str, words: list[str]) -> list[str]:
    options = PIP_TARGETS if installer == "pip" else {"-p", "--prefix"} if installer in (
        "conda", "mamba", "micromamba") else {"--root", "--installroot", "-o"}
    out = []
    for i, w in enumerate(words):
        option, eq, value = w.partition("=")
        if option in options:
            out.append(value if eq else (words[i + 1] if i + 1 < len(words) else ""))
    return out


def _under(path: str, mounts: set[str]) -> bool:
    return any(path == m or path.startswith(m.rstrip("/") + "/") for m in mounts)


# Commands that use nothing an install brings: a script that runs only these after its install left the install
# for the main containers.
BOOKKEEPING = frozenset({"echo", "printf", "mkdir", "cd", "set", "true", "ls", "cp", "mv", "rm", "chmod", "chown",
                         "touch", "sleep", "export", "pwd", "cat", "date", "sync"})


def _used_after(later) -> bool:
    return any(command_name(n) not in BOOKKEEPING and _install(n) is None for n in later)


def check(ctx) -> Iterator[Hit]:
    by_path = {}
    for s in scripts(ctx):
        if ".initContainers." in s.path:
            by_path.setdefault((id(s.obj), s.path.split(".initContainers.")[0]), []).append(s)
    for o, pod_path, pod in ctx.pod_templates():
        init = [c for c in pod.get("initContainers") or [] if isinstance(c, dict)]
        if not init:
            continue
        main = [c for c in pod.get("containers") or [] if isinstance(c, dict)]
        volumes = {v.get("name"): v for v in pod.get("volumes") or [] if isinstance(v, dict)}
        main_volumes = {m.get("name") for c in main for m in c.get("volumeMounts") or [] if isinstance(m, dict)}
        for i, c in enumerate(init):
            mounts = [m for m in c.get("volumeMounts") or [] if isinstance(m, dict)]
            shared = {str(m.get("mountPath", "")) for m in mounts if m.get("name") in main_volumes}
            for m in mounts:
                volume = volumes.get(m.get("name")) or {}
                if "emptyDir" in volume and not m.get("readOnly") and m.get("name") not in main_volumes:
                    yield Hit(f"{pod_path}.initContainers.{i}.volumeMounts", f"{o.kind} {o.name}: init container "
                              f"{c.get('name', i)} writes emptyDir {m.get('name')} at {m.get('mountPath')}, which no "
                              "main container mounts; what it prepares there is discarded", obj=o)
            for s in by_path.get((id(o), pod_path), []):
                if not s.path.startswith(f"{pod_path}.initContainers.{i}."):
                    continue
                commands = list(commands_in(s.root))
                for k, node in enumerate(commands):
                    found = _install(node)
                    if found is None:
                        continue
                    if _used_after(commands[k + 1:]):
                        break  # the init container runs what it installed itself (a download, an export)
                    installer, words = found
                    if any(_under(t, shared) for t in _targets(installer, words)):
                        continue
                    yield Hit(s.path, f"{o.kind} {o.name}: init container {c.get('name', i)} runs `{installer} "
                              f"install` into its own filesystem (script line {s.line_of(node)}); the main "
                              "containers never see what it installs (only volumes are shared)", obj=o)
                    break
