"""Shell scripts inside manifests, parsed with tree-sitter's bash grammar (a real parser, not patterns).

A container runs a script when its command + args is `sh|bash|… [flags] -c [--] SCRIPT` (flags may be combined:
`-ec`, `-xeuc`, `-lc`), possibly behind a launcher (`/usr/bin/env bash -c`, `tini -- sh -c`), or when it runs a file
that a ConfigMap of the same manifests mounts (`bash /scripts/start.sh`, or `/scripts/start.sh` itself under a shell
shebang): the ConfigMap's text is the script, found where the container names the file. A RayJob's `entrypoint` is a
script too (Ray runs it with `/bin/sh -c`). The same applies to exec probes and lifecycle hooks.
Rules read `Script` objects: the source, where it sits in the object, the shell options its invocation sets, and
the parse tree.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from ..apivalidation.podspecs import containers

if TYPE_CHECKING:  # imported where a script is parsed: the in-pod job gate loads the rules without tree-sitter
    from tree_sitter import Node, Parser, Tree

SHELLS = frozenset({"sh", "bash", "ash", "dash", "zsh", "ksh"})
# Shell options a `set` (or the invocation) can turn on, by their one-letter and long names.
LONG_OPTIONS = {"errexit": "e", "xtrace": "x", "pipefail": "pipefail", "nounset": "u"}
MAX_SCRIPT = 200_000  # characters; a longer "script" is data, not something these rules read


@dataclass
class Script:
    obj: object  # the RenderedObject
    path: str  # dotted path of the string holding the script
    where: str  # "container train" / "readinessProbe of container train"
    source: str
    invocation_options: frozenset[str]  # options set by the shell's own flags (`bash -ec`)
    tree: Tree
    container: dict | None = None  # the container running it (None: a RayJob entrypoint)
    positional: tuple[str, ...] = ()  # the words `sh -c SCRIPT NAME ARG...` gives it as `$1 ...` (`"$@"`)
    config_map: tuple[str, str] | None = None  # (ConfigMap, key) of a script the container runs from a configMap volume

    @property
    def root(self) -> Node:
        return self.tree.root_node

    def line_of(self, node: Node) -> int:
        return node.start_point[0] + 1


@lru_cache(maxsize=1)
def _parser() -> Parser:
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


@lru_cache(maxsize=512)
def parse(source: str) -> Tree:
    """The parse tree of a script. Cached by its text: each script is read by a dozen rules and their helpers (download
    directories, object-store copies, one-shot and idle checks), and a tree is never edited once parsed."""
    return _parser().parse(source.encode("utf-8", "replace"))


def _at(node, *keys):
    """node[k1][k2]..., or None where a level is missing or not a mapping (hostile input must not crash a rule)."""
    for k in keys:
        node = node.get(k) if isinstance(node, dict) else None
    return node


def scripts(ctx) -> Iterator[Script]:
    """Every shell script a pod template runs: entrypoints, exec probes and lifecycle hooks; and every RayJob
    entrypoint. Found and parsed once per object list: a dozen rules read them."""
    return iter(ctx.derived("shell-scripts", lambda: list(_find_scripts(ctx))))


def _find_scripts(ctx) -> Iterator[Script]:
    for o, pod_path, pod in ctx.pod_templates():
        for field, i, c in containers(pod):
            base = f"{pod_path}.{field}.{i}"
            name = c.get("name", i)
            command = c.get("command") if isinstance(c.get("command"), list) else []
            args = c.get("args") if isinstance(c.get("args"), list) else []
            argv = [*command, *args]
            n_cmd = len(command)
            found = script_in(argv)
            if found:
                index, opts = found
                path = f"{base}.command.{index}" if index < n_cmd else f"{base}.args.{index - n_cmd}"
                yield _script(o, path, f"container {name}", argv[index], opts, c, argv[index + 2:])
            else:
                mounted = _mounted_script(ctx, pod, c, argv)
                if mounted:
                    index, opts, source, (file, config_map, key) = mounted
                    path = f"{base}.command.{index}" if index < n_cmd else f"{base}.args.{index - n_cmd}"
                    yield _script(o, path, f"container {name} (its script {file}, key {key} of ConfigMap "
                                  f"{config_map})", source, opts, c, argv[index + 1:], (config_map, key))
            for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
                cmd = _at(c, probe, "exec", "command")
                cmd = cmd if isinstance(cmd, list) else []
                found = script_in(cmd)
                if found:
                    yield _script(o, f"{base}.{probe}.exec.command.{found[0]}", f"{probe} of container {name}",
                                  cmd[found[0]], found[1], c, cmd[found[0] + 2:])
            for hook in ("postStart", "preStop"):
                cmd = _at(c, "lifecycle", hook, "exec", "command")
                cmd = cmd if isinstance(cmd, list) else []
                found = script_in(cmd)
                if found:
                    yield _script(o, f"{base}.lifecycle.{hook}.exec.command.{found[0]}", f"{hook} of container {name}",
                                  cmd[found[0]], found[1], c, cmd[found[0] + 2:])
    # A RayJob's entrypoint is a shell command line: Ray's job supervisor runs it with `/bin/sh -c`.
    for o in ctx.of_kind("RayJob"):
        entry = _at(o.obj, "spec", "entrypoint")
        if isinstance(entry, str) and entry.strip() and len(entry) <= MAX_SCRIPT:
            yield _script(o, "spec.entrypoint", "the RayJob entrypoint", entry, frozenset())


def _script(obj, path: str, where: str, source: str, opts: frozenset[str], container: dict | None = None,
            after: list | None = None, config_map: tuple[str, str] | None = None) -> Script:
    return Script(obj, path, where, source, opts, parse(source), container, tuple(str(w) for w in after or ()),
                  config_map)


def config_map_data(ctx) -> dict[str, dict]:
    """Each ConfigMap of the set by name: its `data` (what `envFrom`, `configMapKeyRef` and a configMap volume
    read), once per lint."""
    return ctx.derived("config-map-data", lambda: {m.name: m.obj.get("data") for m in ctx.of_kind("ConfigMap")
                                                   if isinstance(m.obj.get("data"), dict)})


SHELL_SHEBANG = re.compile(r"#!\s*\S*?(?:/|\s)(?:env\s+)?(?:ba|da|a|z|k)?sh\b")


def _mounted_script(ctx, pod: dict, c: dict, argv: list) -> tuple[int, frozenset[str], str, tuple] | None:
    """(index of the file's path in argv, the shell options its flags set, the script's text, (the file, its
    ConfigMap, its key)) when the container runs, as its program or through a shell, a file that a configMap volume
    of the pod puts there from a ConfigMap of the set."""
    words = [w if isinstance(w, str) else "" for w in argv]
    start = program_start(argv)
    if start >= len(words):
        return None
    opts: set[str] = set()
    index, by_shell = start, posixpath.basename(words[start]) in SHELLS
    if by_shell:
        index += 1
        while index < len(words) and words[index].startswith("-") and words[index] != "--":
            if "c" in words[index][1:] and not words[index].startswith("--"):
                return None  # a -c string: script_in's
            opts |= set(words[index][1:]) if not words[index].startswith("--") else set()
            index += 1
        index += index < len(words) and words[index] == "--"
    if index >= len(words) or not words[index].startswith("/"):
        return None
    found = _config_map_file(ctx, pod, c, posixpath.normpath(words[index]))
    if found is None:
        return None
    source, origin = found
    if len(source) > MAX_SCRIPT or not (by_shell or SHELL_SHEBANG.match(source)):
        return None
    return index, frozenset(opts), source, origin


def _config_map_file(ctx, pod: dict, c: dict, path: str) -> tuple[str, tuple] | None:
    """The text a configMap volume mounted in the container puts at `path`, and (the path, ConfigMap, key)."""
    volumes = {v.get("name"): v.get("configMap") for v in pod.get("volumes") or []
               if isinstance(v, dict) and isinstance(v.get("configMap"), dict)}
    for m in c.get("volumeMounts") or []:
        if not isinstance(m, dict) or m.get("name") not in volumes or not isinstance(m.get("mountPath"), str):
            continue
        source, mount = volumes[m["name"]], posixpath.normpath(m["mountPath"])
        if m.get("subPath"):
            key, inside = str(m["subPath"]), path == mount
        else:
            key, inside = posixpath.relpath(path, mount), path.startswith(mount.rstrip("/") + "/")
        if not inside:
            continue
        items = {str(i.get("path")): str(i.get("key")) for i in source.get("items") or [] if isinstance(i, dict)}
        key = items.get(key, key if not items else None)
        data = config_map_data(ctx).get(str(source.get("name")))
        text = data.get(key) if isinstance(data, dict) and key else None
        if isinstance(text, str):
            return text, (path, str(source.get("name")), key)
    return None


def split_words(text: str) -> list[str]:
    """`shlex.split(text)` (ValueError on an unbalanced quote), remembered per text: several rules split the same
    container arguments, and shlex reads a character at a time in Python."""
    words = _split(text) if len(text) <= 4096 else _split.__wrapped__(text)  # (the cache holds short texts)
    if words is None:
        raise ValueError(f"unbalanced quotes in {text[:40]!r}")
    return list(words)


@lru_cache(maxsize=4096)
def _split(text: str) -> tuple[str, ...] | None:
    try:
        return tuple(shlex.split(text))
    except ValueError:
        return None


# Programs that run the rest of their argv (`/usr/bin/env bash -c`, `tini -- sh -c`): the shell comes after them.
LAUNCHERS = frozenset({"env", "tini", "dumb-init", "catatonit", "nice", "nohup", "exec"})


def program_start(argv: list) -> int:
    """Index of the program argv runs, past any launcher (`/usr/bin/env`, `tini --`), its flags and VAR=value words."""
    start = 0
    while start < len(argv) and isinstance(argv[start], str) and posixpath.basename(argv[start]) in LAUNCHERS:
        start += 1
        while start < len(argv) and isinstance(argv[start], str) and (
                argv[start].startswith("-") or "=" in argv[start]):
            start += 1
    return start


def script_in(argv: list) -> tuple[int, frozenset[str]] | None:
    """(index of the script argument, options the shell flags set) when argv runs `SHELL [flags] -c SCRIPT`:
    rules that read a container's argv word by word leave such a container to `scripts`."""
    start = program_start(argv)
    if start >= len(argv) or not isinstance(argv[start], str) or posixpath.basename(argv[start]) not in SHELLS:
        return None
    opts: set[str] = set()
    i = start + 1
    while i < len(argv) and isinstance(argv[i], str) and argv[i].startswith("-"):
        flag = argv[i]
        if flag == "--":
            return None  # `bash -- FILE`: a script file, not a -c string
        if flag.startswith("--"):  # --login, --norc, --noprofile: no option these rules read
            i += 1
            continue
        if flag == "-o" and i + 1 < len(argv):
            opts.add(LONG_OPTIONS.get(str(argv[i + 1]), str(argv[i + 1])))
            i += 2
            continue
        letters = flag[1:]
        opts |= set(letters) - {"c"}
        if "c" in letters:
            j = i + 1
            if j + 1 < len(argv) and argv[j] == "--":  # `bash -c -- SCRIPT`: `--` ends the options
                j += 1
            if j < len(argv) and isinstance(argv[j], str) and len(argv[j]) <= MAX_SCRIPT:
                return j, frozenset(opts)
            return None
        i += 1
    return None


# --- walking the tree ---------------------------------------------------------------------------------------

def walk(node: Node) -> Iterator[Node]:
    yield node
    for child in node.children:
        yield from walk(child)


def command_name(node: Node) -> str:
    """`pip` for a `command` node running pip (path stripped); '' otherwise."""
    if node.type != "command":
        return ""
    name = node.child_by_field_name("name")
    return posixpath.basename(_text(name)) if name is not None else ""


def command_words(node: Node) -> list[str]:
    """The command's arguments: not its name, redirections or the `VAR=value` assignments before it."""
    return [_text(c) for c in node.children if c.type not in ("command_name", "file_redirect", "herestring_redirect",
                                                              "variable_assignment") and c.is_named]


def assigned(root: Node) -> dict[str, str]:
    """The script's own variables: `MODEL="org/name"` as a statement of its top level (a later one wins), what its
    later words expand `$MODEL` to. A value may name other variables (`URL="https://host/${REPO}/file"`), which the
    reader expands in turn; values holding a command substitution are left out."""
    out: dict[str, str] = {}
    for node in root.named_children:
        if node.type != "variable_assignment":
            continue
        name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
        if name is None or value is None or value.type not in ("word", "string", "raw_string"):
            continue
        if any(n.type == "command_substitution" for n in walk(value)):
            continue
        out[_text(name)] = _text(value).strip("'\"")
    return out


def commands_in(node: Node) -> Iterator[Node]:
    return (n for n in walk(node) if n.type == "command")


def _text(node: Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text is not None else ""


def text(node: Node | None) -> str:
    return _text(node)


SET_FLAGS = re.compile(r"^[-+][a-zA-Z]+$")


def set_changes(node: Node) -> list[tuple[str, bool]]:
    """(option, on) for a `set` command: `set -euo pipefail` -> e on, u on, pipefail on; `set +x` -> x off."""
    if command_name(node) != "set":
        return []
    out: list[tuple[str, bool]] = []
    words = command_words(node)
    i = 0
    while i < len(words):
        w = words[i]
        if w in ("-o", "+o") and i + 1 < len(words):
            out.append((LONG_OPTIONS.get(words[i + 1], words[i + 1]), w == "-o"))
            i += 2
            continue
        if SET_FLAGS.match(w):
            on = w[0] == "-"
            letters = w[1:]
            if letters.endswith("o") and i + 1 < len(words):  # `-euo pipefail`
                out += [(ch, on) for ch in letters[:-1]]
                out.append((LONG_OPTIONS.get(words[i + 1], words[i + 1]), on))
                i += 2
                continue
            out += [(ch, on) for ch in letters]
        i += 1
    return out


def in_condition(node: Node) -> bool:
    """True when `node` is (inside) the condition of an if/while/until, or a non-final member of an && / ||
    list: set -e does not stop the script there, so a failure is handled by the script itself."""
    child, parent = node, node.parent
    while parent is not None and parent.type not in ("program",):
        if parent.type in ("if_statement", "elif_clause", "while_statement", "until_statement"):
            for cond in parent.children_by_field_name("condition"):
                if cond.start_byte <= child.start_byte and child.end_byte <= cond.end_byte:
                    return True
        if parent.type == "list" and child.start_byte != parent.children[-1].start_byte:
            return True
        if parent.type in ("do_group", "compound_statement", "subshell", "function_definition"):
            return False
        child, parent = parent, parent.parent
    return False


def curl_ignores_http_errors(words: list[str]) -> bool:
    """A curl command (its words after `curl`) that exits 0 on an HTTP error status: no `-f`/`--fail`/
    `--fail-with-body` (curl reports 4xx/5xx as failure only with one of those)."""
    for raw in words:
        word = raw.strip("'\"")
        if word in ("--fail", "--fail-with-body", "--fail-early"):
            return False
        if re.fullmatch(r"-[A-Za-z0-9#:]+", word) and "f" in word[1:].split("o", 1)[0]:
            return False  # -f, -sf, -fsSL (letters after a value-taking -o are its value)
    return True


def pip_install_words(node) -> list[str] | None:
    """The words after `install` when this command is a pip install (`pip`, `pip3.11`, `python -m pip`,
    `uv pip`), else None."""
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
