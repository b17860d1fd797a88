"""Helm's `--set` line grammar, read as Helm 4.1.4 reads it (helm.sh/helm/v4 pkg/strvals, parser.go and
literal_parser.go), into a values mapping that already holds the `-f` files.

  name=value,outer.inner=value,list[0]=value,list[1].key=value,name={a,b}   (--set, --set-string, --set-file)
  name=<JSON>,other=<JSON>                                                  (--set-json)
  name=the rest of the line, commas and all                                  (--set-literal)

The parts users meet: `\\` escapes the next character in keys and values; `{a,b}` is a list; `--set` types a
value (true/false/null in any case, base-10 integers without a leading zero; everything else, `1.5` and `1e3`
included, stays a string), `--set-string` never does; an index past the end pads the list with nulls (at most
65,536); a key nests at most 30 levels; a key that already holds a scalar or a list cannot be entered as a map
(Helm refuses it too). `Assignment`s say which key paths the line set, and at which column, so a finding can point
into the argument.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..safeyaml import MAX_DEPTH

MAX_INDEX = 65536  # strvals.MaxIndex
MAX_NESTED_NAME_LEVEL = 30  # strvals.MaxNestedNameLevel
_GO_INT = re.compile(r"[+-]?[0-9]+\Z")  # strconv.Atoi / ParseInt(s, 10, 64): a sign and ASCII digits only
_INT64 = (-(2 ** 63), 2 ** 63 - 1)
_EXACT_FLOAT = 2 ** 53  # a JSON number is a Go float64: integers beyond this are not kept exactly


class SetSyntaxError(ValueError):
    """The line cannot be read; `column` (1-based) is where the reading stopped."""

    def __init__(self, message: str, column: int):
        super().__init__(message)
        self.message, self.column = message, column
        self.assigned: list[Assignment] = []  # what the line had set before it stopped


class _End(Exception):
    """The line ended (Go's io.EOF): where a key was expected, the line is done; elsewhere, it is what Helm makes
    of a value cut short."""


@dataclass(frozen=True)
class Assignment:
    key_path: str  # dotted, list indices as numbers: global.job.x, hosts.0.name
    column: int  # 1-based column of the assignment's first key in the argument


Reader = Callable[[str], Any]  # a value's text -> the value (--set-file reads the file it names)


def typed(text: str) -> Any:
    """What `--set` makes of a value's text (strvals.typedVal)."""
    folded = text.casefold() if len(text.casefold()) == len(text) else text
    if folded == "true":
        return True
    if folded == "false":
        return False
    if folded == "null":
        return None
    if text == "0":
        return 0
    if text and text[0] != "0" and _GO_INT.match(text):
        number = int(text)
        if _INT64[0] <= number <= _INT64[1]:
            return number
    return text


def as_string(text: str) -> str:
    """What `--set-string` makes of it: the text."""
    return text


def parse_into(line: str, dest: dict[str, Any], reader: Reader = typed) -> list[Assignment]:
    """`--set`, `--set-string` (reader=as_string) or `--set-file` (reader reads the file) into `dest`."""
    return _Parser(line, dest, reader=reader).parse()


def parse_json_into(line: str, dest: dict[str, Any]) -> list[Assignment]:
    """`--set-json name=<JSON>,...` into `dest`; an empty value is null."""
    return _Parser(line, dest, json_values=True).parse()


def parse_literal_into(line: str, dest: dict[str, Any]) -> list[Assignment]:
    """`--set-literal name=value`: one key, the value is the rest of the line as it stands."""
    return _Parser(line, dest, literal=True).parse()


def json_value(text: str, start: int = 0) -> tuple[Any, int]:
    """The JSON value at `text[start:]` as Go's encoding/json decodes it into an interface{} (numbers are float64:
    integers kept exactly only up to 2**53; no NaN or Infinity), and where it ends."""
    decoder = json.JSONDecoder(parse_int=_json_int, parse_float=_json_float, parse_constant=_no_constant)
    try:
        return decoder.raw_decode(text, start)
    except json.JSONDecodeError as exc:
        raise SetSyntaxError(f"not JSON: {exc.msg}", exc.pos + 1) from None
    except ValueError as exc:  # a number Go's float64 cannot hold, NaN or Infinity
        raise SetSyntaxError(f"not JSON: {exc}", start + 1) from None
    except RecursionError:
        raise SetSyntaxError("JSON nested too deeply", start + 1) from None


def _json_int(text: str) -> int | float:
    number = int(text)
    return number if abs(number) <= _EXACT_FLOAT else _json_float(text)


def _json_float(text: str) -> float:
    number = float(text)
    if number in (float("inf"), float("-inf")):
        raise ValueError(f"number {text} is out of range")
    return number


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def go_space(char: str) -> bool:
    """unicode.IsSpace: Python's isspace() also counts the four ASCII separators 0x1c-0x1f, Go does not."""
    return char.isspace() and char not in "\x1c\x1d\x1e\x1f"


def go_trim(text: str) -> str:
    """strings.TrimSpace."""
    start, end = 0, len(text)
    while start < end and go_space(text[start]):
        start += 1
    while end > start and go_space(text[end - 1]):
        end -= 1
    return text[start:end]


class _Parser:
    def __init__(self, line: str, dest: dict[str, Any], *, reader: Reader = typed, json_values: bool = False,
                 literal: bool = False):
        self.text, self.pos, self.dest = line, 0, dest
        self.reader, self.json_values, self.literal = reader, json_values, literal
        self.assigned: list[Assignment] = []
        self.start = 0

    # --- reading runes ----------------------------------------------------------------------------------------
    def _until(self, stops: str) -> tuple[str, str | None]:
        """The text up to the first stop rune (consumed) and that rune; None when the line ended first. Outside
        --set-literal a backslash takes the next character as it is."""
        out = []
        while self.pos < len(self.text):
            char = self.text[self.pos]
            self.pos += 1
            if char in stops:
                return "".join(out), char
            if char == "\\" and not self.literal:
                if self.pos >= len(self.text):
                    return "".join(out), None
                char = self.text[self.pos]
                self.pos += 1
            out.append(char)
        return "".join(out), None

    def _within_depth(self, path: tuple) -> None:
        """Values files are refused past MAX_DEPTH levels (safeyaml); a line is held to the same bound (Helm's own
        30-level limit counts map keys only: `a[0].a[0]...` would nest without end)."""
        if len(path) >= MAX_DEPTH:
            raise self._fail(f"nested deeper than {MAX_DEPTH} levels")

    def _fail(self, message: str) -> SetSyntaxError:
        return SetSyntaxError(message, min(self.pos, len(self.text)) + 1)

    def _not(self, key_path: str, found: Any, wanted: str) -> SetSyntaxError:
        """Helm refuses the line too (a failed type assertion in strvals): say what is in the way."""
        return self._fail(f"{key_path} is {_kind(found)} in the values below, not {wanted}")

    # --- the grammar ------------------------------------------------------------------------------------------
    def parse(self) -> list[Assignment]:
        while True:
            self.start = self.pos
            try:
                self._key(self.dest, 0, ())
            except _End:
                return self.assigned
            except SetSyntaxError as exc:
                exc.assigned = self.assigned
                raise

    def _record(self, path: tuple) -> None:
        self.assigned.append(Assignment(".".join(str(p) for p in path), self.start + 1))

    def _key(self, data: dict[str, Any], level: int, path: tuple) -> None:
        self._within_depth(path)
        stops = "=[." if self.literal else "=[,."
        key, last = self._until(stops)
        if last is None:
            if not key:
                raise _End
            raise self._fail(f"key {key!r} has no value")
        if last == "[":
            index = self._index()
            items = data.get(key, [])
            if key in data and not isinstance(items, list):
                raise self._not(_dotted(path, key), items, "a list: no index of it can be set")
            try:
                items = self._list_item(items, index, level, (*path, key))
            finally:
                _set(data, key, items)
            return
        if last == "=":
            _set(data, key, self._value((*path, key)))
            return
        if last == ",":
            _set(data, key, "")
            raise self._fail(f"key {key!r} has no value (cannot end with ,)")
        # last == ".": a map under `key`
        level += 1
        if level > MAX_NESTED_NAME_LEVEL:
            raise self._fail(f"a key nests more than {MAX_NESTED_NAME_LEVEL} levels deep")
        inner = data.get(key, {})
        if key in data and not isinstance(inner, dict):
            raise self._not(_dotted(path, key), inner, "a map: no key under it can be set")
        try:
            self._key(inner, level, (*path, key))
        except _End:
            if inner:
                _set(data, key, inner)
            raise
        if not inner:
            raise self._fail(f"key map {key!r} has no value")
        _set(data, key, inner)

    def _index(self) -> int:
        text, last = self._until("]")
        if last is None:
            raise _End  # Helm 4 ends the line quietly here ("error parsing index" wraps io.EOF); Helm 3 refuses it
        if not _GO_INT.match(text) or not _INT64[0] <= int(text) <= _INT64[1]:
            raise self._fail(f"error parsing index: {text!r} is not an integer")
        return int(text)

    def _list_item(self, items: list | None, index: int, level: int, path: tuple) -> list:
        self._within_depth(path)
        if index < 0:
            raise self._fail(f"negative {index} index not allowed")
        key, last = self._until("[.=")
        if key:
            raise self._fail(f"unexpected data at end of array index: {key!r}")
        if last is None:
            return items if items is not None else []
        here = (*path, index)
        if last == "=":
            return self._set_index(items, index, self._value(here))
        if last == "[":
            inner_index = self._index()
            current = items[index] if items is not None and index < len(items) else None
            if current is not None and not isinstance(current, list):
                raise self._not(_dotted(path, index), current, "a list: no index of it can be set")
            return self._set_index(items, index, self._list_item(current, inner_index, level, here))
        # last == ".": a map at this index; whatever else was there is dropped
        inner: dict[str, Any] = {}
        if items is not None and index < len(items):
            if not isinstance(items[index], dict):
                items[index] = {}
            inner = items[index]
        self._key(inner, level, here)
        return self._set_index(items, index, inner)

    def _set_index(self, items: list | None, index: int, value: Any) -> list:
        if index > MAX_INDEX:
            raise self._fail(f"index of {index} is greater than maximum supported index of {MAX_INDEX}")
        items = [] if items is None else items
        if len(items) <= index:
            items.extend([None] * (index + 1 - len(items)))
        items[index] = value
        return items

    def _value(self, path: tuple) -> Any:
        """The value after `=`; records the assignment."""
        self._record(path)
        if self.literal:
            value, self.pos = self.text[self.pos:], len(self.text)
            return value
        if self.json_values:
            return self._json(len(path))
        if self.pos >= len(self.text):
            return ""
        if self.text[self.pos] == "{":
            self.pos += 1
            return self._list()
        text, _ = self._until(",")
        return self.reader(text)

    def _list(self) -> list:
        out = []
        while True:
            text, last = self._until(",}")
            if last is None:
                raise self._fail("list must terminate with '}'")
            out.append(self.reader(text))
            if last == "}":
                if self.pos < len(self.text) and self.text[self.pos] == ",":
                    self.pos += 1
                return out

    def _json(self, depth: int) -> Any:
        """A JSON value set `depth` keys deep."""
        if self._empty_value():
            return None
        start = self.pos
        value, self.pos = json_value(self.text, self.pos)
        if depth + nesting(value) > MAX_DEPTH:
            raise SetSyntaxError(f"nested deeper than {MAX_DEPTH} levels", start + 1)
        self._empty_value()
        return value

    def _empty_value(self) -> bool:
        """Blanks, then a comma or the end (consumed: an empty value), or anything else (left for the next key)."""
        while self.pos < len(self.text):
            char = self.text[self.pos]
            self.pos += 1
            if char == ",":
                return True
            if not go_space(char):
                self.pos -= 1
                return False
        return True


def nesting(value: Any) -> int:
    """Levels of maps and lists in `value` (0 for a scalar), without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, level + 1)
            stack.extend((child, level + 1) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


def _set(data: dict[str, Any], key: str, value: Any) -> None:
    if key:  # strvals.set: an empty key sets nothing
        data[key] = value


def _dotted(path: tuple, last: Any) -> str:
    return ".".join(str(p) for p in (*path, last))


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "a map"
