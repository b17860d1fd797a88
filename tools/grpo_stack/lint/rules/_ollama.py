"""The models a container pulls from the Ollama registry: `ollama pull NAME` and `ollama run NAME` (which pulls a
model it lacks), and a `curl` to a server's `/api/pull` with the name in its JSON body (`{"model": NAME}`, or the
older `{"name": NAME}`: ollama api/types.go PullRequest), in a command line or a script, the name read through the
container's env and a shell `for` loop (over words, an env value, or a bash array: `for m in "${MODELS[@]}"`).

Ollama names a model `[host/][namespace/]model[:tag][+build][@digest]`; a missing tag is `latest`, and only the
digest part fixes the weights (ollama types/model/name.go ParseName, FillDefault `registry.ollama.ai/library/?:latest`):
the registry moves a tag to each new upload.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

from ..shell import command_name, command_words, commands_in, parse, script_in, split_words, text, walk
from ._hub import resolve
from ._objects import argv_of, containers, literal_env

# A name Ollama's parser accepts, and nothing left unexpanded in it (`$model` with no value known).
NAME = re.compile(r"^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+){0,2}(:[A-Za-z0-9_.-]+)?(\+[A-Za-z0-9_.-]+)?(@[A-Za-z0-9_:-]+)?$")
PULLING = ("pull", "run")


@dataclass(frozen=True)
class OllamaPull:
    name: str
    how: str  # "ollama pull", "ollama run"

    @property
    def tag(self) -> str:
        last = self.name.split("@", 1)[0].rsplit("/", 1)[-1]
        return last.split(":", 1)[1].split("+", 1)[0] if ":" in last else "latest"

    @property
    def pinned(self) -> bool:
        return "@" in self.name


def ollama_pulls(words: list[str], env: dict[str, str]) -> Iterator[OllamaPull]:
    """The pull one command line makes (its words, the command's name first)."""
    program = words[0].rsplit("/", 1)[-1] if words else ""
    if program == "curl":
        yield from _api_pull(words, env)
    if program != "ollama" or words[1:2] not in ([w] for w in PULLING):
        return
    positional = [w for w in words[2:] if not w.startswith("-")]
    if positional:
        name = resolve(positional[0].strip("'\""), env)
        if NAME.match(name):
            yield OllamaPull(name, f"ollama {words[1]}")


DATA_FLAGS = frozenset({"-d", "--data", "--data-raw", "--data-binary", "--json"})


def _api_pull(words: list[str], env: dict[str, str]) -> Iterator[OllamaPull]:
    """`curl ... http://HOST/api/pull -d '{"model": NAME}'`."""
    unquoted = [resolve(w.strip("'\""), env) for w in words]
    if not any(w.split("?", 1)[0].rstrip("/").endswith("/api/pull") for w in unquoted):
        return
    for flag, value in zip(unquoted, unquoted[1:], strict=False):
        if flag in DATA_FLAGS:
            try:
                body = json.loads(value)
            except ValueError:
                continue
            name = body.get("model") or body.get("name") if isinstance(body, dict) else None
            if isinstance(name, str) and NAME.match(name):
                yield OllamaPull(name, "POST /api/pull")


def script_ollama_pulls(node, env: dict[str, str]) -> Iterator[OllamaPull]:
    """The pulls of one command of a script, with each value a `for` loop around it gives its variable."""
    words = [command_name(node), *command_words(node)]
    seen = set()
    for bound in _loop_envs(node, env):
        for pull in ollama_pulls(words, bound):
            if pull.name not in seen:
                seen.add(pull.name)
                yield pull


def _loop_envs(node, env: dict[str, str]) -> list[dict[str, str]]:
    """`env` once for each value the `for VAR in WORDS` loops around `node` give VAR (WORDS read through `env` and
    split as the shell splits an unquoted expansion; `"${ARRAY[@]}"` is the elements of the script's `ARRAY=(...)`)."""
    envs = [env]
    arrays: dict[str, list[str]] | None = None
    parent = node.parent
    while parent is not None:
        variable = parent.child_by_field_name("variable") if parent.type == "for_statement" else None
        if variable is not None:
            values = []
            for value in parent.children_by_field_name("value"):
                whole = ARRAY_ALL.match(text(value))
                if whole:
                    arrays = _arrays(parent) if arrays is None else arrays
                    values += arrays.get(whole.group(1), [])
                else:
                    values += _words(resolve(text(value), env))
            name = text(variable)
            envs = [{**e, name: v} for e in envs for v in values] or envs
        parent = parent.parent
    return envs


# All the elements of a bash array, as a `for` loop's words: `"${MODELS[@]}"`, `${MODELS[*]}`.
ARRAY_ALL = re.compile(r'^"?\$\{([A-Za-z_][A-Za-z0-9_]*)\[[@*]\]\}"?$')


def _arrays(node) -> dict[str, list[str]]:
    """The bash arrays the script around `node` assigns (`MODELS=(a "b")`), by name: the last assignment's words."""
    root = node
    while root.parent is not None:
        root = root.parent
    out: dict[str, list[str]] = {}
    for n in walk(root):
        value = n.child_by_field_name("value") if n.type == "variable_assignment" else None
        if value is not None and value.type == "array":
            words = [w for c in value.children if c.type in ("word", "string", "raw_string")
                     for w in _words(text(c))]
            out[text(n.child_by_field_name("name"))] = words
    return out


def _words(text: str) -> list[str]:
    try:
        return split_words(text)
    except ValueError:  # an unbalanced quote: the loop's values are unknown
        return []


def pod_ollama_pulls(pod: dict) -> list[OllamaPull]:
    """Every pull the pod's containers make when they start (their commands and postStart hooks), whichever
    container runs it: a sidecar's `curl localhost:11434/api/pull` fills the server's store beside it."""
    found: list[OllamaPull] = []
    for _field, _i, c in containers(pod):
        env = literal_env(c)
        hook = ((c.get("lifecycle") or {}).get("postStart") or {}).get("exec") if isinstance(c.get("lifecycle"),
                                                                                           dict) else None
        for argv in (argv_of(c), [str(w) for w in (hook or {}).get("command") or [] if isinstance(hook, dict)]):
            script = script_in(argv)
            if script is None:
                found += ollama_pulls(argv, env)
            elif script[0] < len(argv):
                found += [p for node in commands_in(parse(argv[script[0]]).root_node)
                          for p in script_ollama_pulls(node, env)]
    return found
