"""The values flags grpo-lint and grpo-render share with `helm install`: `-f FILE` layers, then `--set-json`,
`--set`, `--set-string`, `--set-file` and `--set-literal`, applied in that order whatever order they were given in
(Helm's pkg/cli/values MergeValues). Light to import: a lint answered from the cache reads no YAML or schema."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .layers import SetArgument

# Helm's order: every -f file first, then each kind of --set flag in turn.
SET_FLAGS = ("--set-json", "--set", "--set-string", "--set-file", "--set-literal")


@dataclass
class ValueOptions:
    """The values flags of one command line, as given."""

    files: list[str] = field(default_factory=list)
    sets: dict[str, list[str]] = field(default_factory=dict)  # flag -> arguments, in the order given

    @property
    def any_set(self) -> bool:
        return any(self.sets.values())


def add_value_options(parser: argparse.ArgumentParser, files_help: str) -> None:
    group = parser.add_argument_group("values, as helm install takes them (docs/values-flags.md)")
    group.add_argument("-f", "--values", dest="layers", action="append", default=[], metavar="FILE",
                       help=files_help)
    for flag, what in (("--set", "typed: true/false/null and integers become those, the rest strings"),
                       ("--set-string", "every value a string"),
                       ("--set-file", "the value is the content of the file it names"),
                       ("--set-json", "the value is JSON; or a whole JSON object"),
                       ("--set-literal", "one key; the value is the rest of the argument, as it stands")):
        group.add_argument(flag, dest=_dest(flag), action="append", default=[], metavar="KEY=VALUE",
                           help=f"over every file, as helm {flag}: {what}")


def value_options(args: argparse.Namespace) -> ValueOptions:
    return ValueOptions(list(args.layers), {flag: list(getattr(args, _dest(flag))) for flag in SET_FLAGS})


def command_line_layers(options: ValueOptions) -> list[SetArgument]:
    """One layer per --set* argument, in the order Helm applies them. A line that cannot be applied is an
    InputError naming the flag, the argument and the column, raised where the layers are merged."""
    if not options.any_set:
        return []
    from .layers import SetArgument

    return [SetArgument.read(flag, argument) for flag in SET_FLAGS for argument in options.sets.get(flag, [])]


def split_releases(positional: list[str], files: list[str]) -> tuple[list[str], list[str]]:
    """(the layers under every release, the files each naming one release): each positional file is its own
    release over every -f file; with none, the -f files are one release, named by the last of them."""
    if positional:
        return files, positional
    return files[:-1], files[-1:]


def _dest(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")
