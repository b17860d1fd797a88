"""Reading untrusted YAML: bounded bytes, core-schema tags only, plain JSON-safe values, every error located.

Every file grpo-lint and grpo-render read from the user (values files, manifest streams, the suppression config)
goes through `read_text` and `load_documents`, so one place decides what input is acceptable:

- only regular files are read, at most MAX_BYTES (FIFOs, devices and sockets are refused before any read, so a
  FIFO cannot block and /dev/zero is not read whole);
- YAML tags outside the core schema (map, seq, str, int, float, bool, null, plus YAML 1.1 merge keys) are
  input errors, and so is a core tag whose value does not fit it (`!!int "abc"`, `!!map [1, 2]`);
- every value must survive Helm's JSON round trip unchanged: no NaN/Infinity, integers within ±MAX_INT, no
  control characters in strings (Helm writes them raw into manifests that no YAML reader accepts), string keys;
- at most MAX_NODES nodes after alias expansion and MAX_DEPTH levels of nesting.

Errors are `InputError`s with file, line, column, key path and a bounded excerpt of the bad value.
"""

from __future__ import annotations

import math
import os
import stat
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from .errors import InputError, excerpt

MAX_BYTES = 5 * 1024 * 1024  # the largest shipped values file is 2 KB; rendered releases are ~100 KB
MAX_NODES = 200_000  # alias expansion is bounded so an anchors/aliases bomb is an input error, not an OOM kill
MAX_DEPTH = 64  # the deepest shipped values key is 5 levels, the deepest rendered object ~15
# Helm decodes values as JSON numbers (float64): an integer beyond 2**53 silently changes (2**64 renders as
# 18446744073709552000), so such an integer is refused instead of being rounded behind the user's back.
MAX_INT = 2**53

_T = "tag:yaml.org,2002:"
SCALAR_TAGS = frozenset(_T + t for t in ("str", "int", "float", "bool", "null"))
MAP_TAG, SEQ_TAG, MERGE_TAG, TIMESTAMP_TAG = _T + "map", _T + "seq", _T + "merge", _T + "timestamp"
# Tab, newline and carriage return are ordinary text; every other C0/C1 control character and DEL is refused.
_ALLOWED_CONTROL = frozenset("\t\n\r")

BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when PyYAML was built with it


def read_text(path: str | Path, max_bytes: int = MAX_BYTES) -> str:
    """The UTF-8 text of a regular file of at most `max_bytes`; anything else is an InputError."""
    name = str(path)
    try:
        # O_NONBLOCK: opening a FIFO for reading must not wait for a writer; it is refused just below.
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise InputError(name, "no such file") from None
    except OSError as exc:
        raise InputError(name, f"cannot read: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise InputError(name, "is a directory, not a file")
        if not stat.S_ISREG(mode):
            raise InputError(name, f"not a regular file ({_file_kind(mode)}); give a YAML file")
        chunks, size = [], 0
        while size <= max_bytes:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise InputError(name, f"cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if size > max_bytes:
        raise InputError(name, f"larger than {max_bytes // (1024 * 1024)} MiB; not a values or manifest file")
    raw = b"".join(chunks)
    if b"\0" in raw:
        raise InputError(name, "binary data (NUL byte); not a YAML file")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(name, f"not UTF-8 text (byte {exc.start})") from None


def _file_kind(mode: int) -> str:
    for test, kind in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return kind
    return "not a plain file"


def load_documents(text: str, name: str) -> list[Any]:
    """Every non-empty YAML document of `text` as plain JSON-safe Python values (see the module docstring)."""
    loader = BaseLoader(text)
    try:
        nodes = []
        while loader.check_node():
            nodes.append(loader.get_node())
        budget = [MAX_NODES]
        return [v for v in (_Converter(loader, name, budget).plain(n, "", 0) for n in nodes) if v is not None]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        line, col = (mark.line + 1, mark.column + 1) if mark else (None, None)
        raise InputError(name, f"invalid YAML: {problem}", line=line, column=col) from None
    except RecursionError:
        raise InputError(name, f"invalid YAML: nested deeper than {MAX_DEPTH} levels") from None
    finally:
        loader.dispose()


class _Converter:
    def __init__(self, loader: Any, name: str, budget: list[int]):
        self.loader, self.name, self.budget = loader, name, budget

    def error(self, node: Any, message: str, path: str) -> InputError:
        mark = node.start_mark
        return InputError(self.name, message, mark.line + 1, mark.column + 1, key_path=path or None)

    def plain(self, node: Any, path: str, depth: int) -> Any:
        self.budget[0] -= 1
        if self.budget[0] < 0:
            raise self.error(node, f"document expands to more than {MAX_NODES} nodes (anchor/alias bomb?)", path)
        if depth > MAX_DEPTH:
            raise self.error(node, f"nested deeper than {MAX_DEPTH} levels", path)
        if isinstance(node, MappingNode):
            if node.tag != MAP_TAG:
                raise self.error(node, f"YAML tag {_short(node.tag)} on a mapping is not allowed", path)
            return self.mapping(node, path, depth)
        if isinstance(node, SequenceNode):
            if node.tag != SEQ_TAG:
                raise self.error(node, f"YAML tag {_short(node.tag)} on a sequence is not allowed", path)
            return [self.plain(v, _join(path, i), depth + 1) for i, v in enumerate(node.value)]
        return self.scalar(node, path)

    def mapping(self, node: MappingNode, path: str, depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        lines: dict[str, int] = {}
        merged: list[dict[str, Any]] = []
        for key_node, value_node in node.value:
            if key_node.tag == MERGE_TAG:  # `<<: *defaults`: Helm's YAML reader supports YAML 1.1 merge keys
                sources = self.plain(value_node, path, depth + 1)
                sources = sources if isinstance(sources, list) else [sources]
                if not all(isinstance(s, dict) for s in sources):
                    raise self.error(value_node, "a merge key (<<) takes a mapping or a list of mappings", path)
                merged += sources
                continue
            if not isinstance(key_node, ScalarNode) or key_node.tag != _T + "str":
                shown = excerpt(key_node.value) if isinstance(key_node, ScalarNode) else "a collection"
                raise self.error(key_node, f"key {shown} is not a string (quote it)", path)
            key = key_node.value
            self.check_text(key_node, key, _join(path, key), "key")
            line = key_node.start_mark.line + 1
            if key in lines:
                raise self.error(key_node, f"duplicate key {excerpt(key)} (first at line {lines[key]})",
                                 _join(path, key))
            lines[key] = line
            out[key] = self.plain(value_node, _join(path, key), depth + 1)
        for source in merged:  # explicit keys win over merged ones, earlier merge sources over later ones
            for k, v in source.items():
                out.setdefault(k, v)
        return out

    def scalar(self, node: ScalarNode, path: str) -> Any:
        if node.tag == TIMESTAMP_TAG:
            raise self.error(node, f"{excerpt(node.value)} reads as a date/time; quote it to make it a string", path)
        if node.tag not in SCALAR_TAGS:
            raise self.error(node, f"YAML tag {_short(node.tag)} is not allowed (core schema only: str, int, float, "
                             "bool, null, map, seq)", path)
        try:
            value = self.loader.construct_object(node, deep=True)
        except (ValueError, KeyError, TypeError, OverflowError, yaml.YAMLError):
            raise self.error(node, f"{excerpt(node.value)} is not a valid {_short(node.tag)}", path) from None
        if isinstance(value, bool) or value is None:
            return value
        if isinstance(value, int):
            if abs(value) > MAX_INT:
                raise self.error(node, f"integer {excerpt(node.value)} is outside ±2**53: Helm reads values as "
                                 "float64 and would change it", path)
            return value
        if isinstance(value, float):
            if not math.isfinite(value):
                raise self.error(node, f"{excerpt(node.value)} is not a finite number (JSON and Helm have no "
                                 "NaN or Infinity)", path)
            return value
        self.check_text(node, value, path, "string")
        return value

    def check_text(self, node: Any, text: str, path: str, what: str) -> None:
        bad = next((c for c in text if (c < " " or "\x7f" <= c <= "\x9f") and c not in _ALLOWED_CONTROL), None)
        if bad is not None:
            raise self.error(node, f"{what} {excerpt(text)} contains the control character {bad!r} "
                             f"(U+{ord(bad):04X}); only tab and newline are allowed", path)


def _join(path: str, part: Any) -> str:
    return f"{path}.{part}" if path else str(part)


def _short(tag: str) -> str:
    return "!!" + tag[len(_T):] if tag.startswith(_T) else tag
