"""Where a container's script copies objects from a bucket to (not a rule: no CODE): the local destinations of the
object-store copies that fill a model cache (`aws s3 sync s3://bucket/model /models`, `gsutil -m cp -r`, `gcloud
storage rsync`, `mc mirror`, `rclone copy`, `s5cmd cp`, `azcopy copy`)."""

from __future__ import annotations

import re

from ..shell import command_name, command_words, commands_in, parse, script_in
from ._objects import argv_of

# program -> the subcommands that copy (the first one or two words after the program), and options that take a
# value (the next word is not a path).
COPIERS = {
    "aws": ({("s3", "cp"), ("s3", "sync"), ("s3", "mv")},
            {"--endpoint-url", "--region", "--profile", "--exclude", "--include", "--storage-class", "--acl", "--sse",
             "--sse-kms-key-id", "--cache-control", "--content-type", "--expires", "--metadata", "--page-size",
             "--grants", "--source-region", "--checksum-algorithm"}),
    "gsutil": ({("cp",), ("rsync",), ("mv",)}, {"-h", "-o", "-p", "-u", "-x", "-z", "-j"}),
    "gcloud": ({("storage", "cp"), ("storage", "rsync"), ("storage", "mv")}, {"--project", "--exclude"}),
    "mc": ({("cp",), ("mirror",)}, {"--exclude", "--older-than", "--newer-than", "--storage-class", "--attr"}),
    "rclone": ({("copy",), ("sync",), ("copyto",)}, {"--include", "--exclude", "--config", "--transfers",
                                                      "--checkers", "--filter"}),
    "s5cmd": ({("cp",), ("sync",)}, {"--endpoint-url", "--exclude", "--include", "--concurrency"}),
    "azcopy": ({("copy",), ("cp",), ("sync",)}, {"--include-pattern", "--exclude-pattern", "--log-level"}),
}
# A source no local path spells: a bucket URL, an https blob, an rclone `remote:path`, an mc `alias/bucket`.
REMOTE = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|[A-Za-z0-9_-]+:(?!/)|[A-Za-z0-9_-]+/[^/])")
VARIABLE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?")


def copy_destinations(c: dict, env: dict[str, str]) -> list[str]:
    """The absolute local paths the container's stated script copies bucket objects into, with `$VAR` taken from
    `env`; a destination held in a variable `env` does not know is left out."""
    argv = argv_of(c)
    script = script_in(argv) if argv else None
    if script is None:
        return []
    out = []
    for node in commands_in(parse(argv[script[0]]).root_node):
        spec = COPIERS.get(command_name(node))
        if spec is None:
            continue
        words = [w.strip("'\"") for w in command_words(node)]
        paths = _paths_after(words, *spec)
        if len(paths) >= 2 and REMOTE.match(paths[0]):
            target = _expanded(paths[-1], env)
            if target and target.startswith("/"):
                out.append(target)
    return out


def _paths_after(words: list[str], subcommands: set[tuple[str, ...]], valued: set[str]) -> list[str]:
    """The positional arguments after a copying subcommand; [] where the words run none."""
    flags_first = [w for w in words if not w.startswith("-")]  # gsutil -m cp: global flags before the subcommand
    for sub in subcommands:
        if tuple(flags_first[:len(sub)]) == sub:
            break
    else:
        return []
    rest = words[words.index(sub[-1]) + 1:]
    paths, skip = [], False
    for w in rest:
        if skip:
            skip = False
        elif w.startswith("-"):
            skip = "=" not in w and w in valued
        else:
            paths.append(w)
    return paths


def _expanded(word: str, env: dict[str, str]) -> str | None:
    missing = [m.group(1) for m in VARIABLE.finditer(word) if m.group(1) not in env]
    return None if missing else VARIABLE.sub(lambda m: env[m.group(1)], word)
