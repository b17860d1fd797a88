"""One `--set*` argument as a layer of a release's values (helmvalues.options gathers them): applied into the
layers below it as Helm applies it, and locating its findings at `--set 'key=value':1:COLUMN`."""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ..errors import InputError
from ..filereader import read_text
from ..values import ValuesFile, merge_maps
from . import strvals

_REMOTE = ("http", "https", "oci")  # schemes Helm would download a --set-file from
_SHOWN = 200  # characters of an argument that name its layer in a message


@dataclass
class SetArgument(ValuesFile):
    """One `--set*` argument as a values layer. `data` holds what the argument sets on its own; `merge_into`
    applies it to the layers below the way Helm does (into them: `--set list[1].x=…` keeps the file's list)."""

    on_command_line = True
    flag: str = "--set"
    argument: str = ""
    assignments: list[strvals.Assignment] = field(default_factory=list)
    _files: dict[str, str] = field(default_factory=dict, repr=False)

    @classmethod
    def read(cls, flag: str, argument: str) -> SetArgument:
        """The layer, with `data` what the argument sets over nothing. Whether it can be applied depends on the
        layers below (Helm accepts `a.=1` over a non-empty map `a`, refuses `a.b=1` over a string `a`), so the
        line is judged in `merge_into`."""
        shown = argument if len(argument) <= _SHOWN else argument[:_SHOWN] + "…"
        layer = cls(path=f"{flag} {shlex.quote(shown)}", data={}, text="", flag=flag, argument=argument)
        # Which keys the line sets, at which columns, does not depend on the layers below: read once here, never
        # rewritten per release (one layer serves every release of a lint).
        try:
            layer.assignments = layer._parse(layer.data)
        except strvals.SetSyntaxError as exc:
            layer.assignments, layer.data = exc.assigned, {}
        except InputError:  # a --set-file that cannot be read: merge_into reports it
            layer.data = {}
        return layer

    def merge_into(self, base: dict[str, Any]) -> dict[str, Any]:
        into = _fresh(base)  # the files' own mappings stay as read: findings are located in them
        self._apply(into)
        return into

    def has(self, key_path: str) -> bool:
        return any(_related(a.key_path, key_path) for a in self.assignments)

    def position(self, key_path: str) -> tuple[int, int]:
        exact = [a for a in self.assignments if a.key_path == key_path]
        related = [a for a in self.assignments if _related(a.key_path, key_path)]
        found = (exact or related or self.assignments or [strvals.Assignment("", 1)])[-1]
        return 1, found.column

    def _apply(self, into: dict[str, Any]) -> None:
        try:
            self._parse(into)
        except strvals.SetSyntaxError as exc:
            raise InputError(self.path, exc.message, 1, exc.column) from None

    def _parse(self, into: dict[str, Any]) -> list[strvals.Assignment]:
        if self.flag == "--set-json" and strvals.go_trim(self.argument).startswith("{"):
            return self._json_object(into)
        if self.flag == "--set-json":
            return strvals.parse_json_into(self.argument, into)
        if self.flag == "--set-literal":
            return strvals.parse_literal_into(self.argument, into)
        reader = {"--set": strvals.typed, "--set-string": strvals.as_string, "--set-file": self._file}[self.flag]
        return strvals.parse_into(self.argument, into, reader)

    def _json_object(self, into: dict[str, Any]) -> list[strvals.Assignment]:
        """Helm 4: `--set-json '{"a": {"b": 1}}'` merges the object as a values file would be merged."""
        text = strvals.go_trim(self.argument)
        value, end = strvals.json_value(text)
        if text[end:].strip(" \t\n\r") or not isinstance(value, dict):  # JSON's own whitespace may follow
            raise strvals.SetSyntaxError("a --set-json argument that starts with { must be one JSON object", 1)
        if strvals.nesting(value) > strvals.MAX_DEPTH:
            raise strvals.SetSyntaxError(f"nested deeper than {strvals.MAX_DEPTH} levels", 1)
        merged = merge_maps(into, value)
        into.clear()
        into.update(merged)
        return [strvals.Assignment(key, 1) for key in value]

    def _file(self, name: str) -> str:
        """--set-file's reader: the file's text (`-` is standard input, read once)."""
        if name not in self._files:
            if name.strip() == "-":
                self._files[name] = _stdin()
            elif urlsplit(name).scheme in _REMOTE:
                raise InputError(self.path, f"{name}: --set-file from a URL is not fetched here; download it and "
                                 "name the file")
            else:
                try:
                    self._files[name] = read_text(name)
                except InputError as exc:
                    raise InputError(self.path, f"{name}: {exc.message}") from None
        return self._files[name]


def _related(assigned: str, key_path: str) -> bool:
    """`key_path` is what the argument set, lies inside it, or holds it."""
    return assigned == key_path or key_path.startswith(assigned + ".") or assigned.startswith(key_path + ".")


def _fresh(node: Any) -> Any:
    """A copy sharing no mapping or list with `node` (not even where YAML aliases shared one)."""
    if isinstance(node, dict):
        return {k: _fresh(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_fresh(v) for v in node]
    return node


_STDIN: list[str] = []


def _stdin() -> str:
    if not _STDIN:
        _STDIN.append(sys.stdin.read())
    return _STDIN[0]
