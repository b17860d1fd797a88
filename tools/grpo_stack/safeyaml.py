"""Reading untrusted YAML: bounded bytes, core-schema tags only, plain JSON-safe values, every error located.

Every file grpo-lint and grpo-render read from the user (values files, manifest streams, the suppression config)
goes through `read_text` and `load_documents`, so one place decides what input is acceptable:

- only regular files are read, at most MAX_BYTES (FIFOs, devices and sockets are refused before any read, so a
  FIFO cannot block and /dev/zero is not read whole);
- YAML tags outside the core schema (map, seq, str, int, float, bool, null, plus YAML 1.1 merge keys) are
  input errors, and so is a core tag whose value does not fit it (`!!int "abc"`, `!!map [1, 2]`);
- every plain scalar and key must read as Helm reads it (go-yaml v2, restated in goyaml.py): a value Helm reads
  as a number is read as Helm reads it (`1e-6`, `1E6`, `+.5`, `0o17` are strings to YAML 1.1 alone); where the
  two readers disagree otherwise (`y`, `1:30`, the non-specific tag `! 8`, a key Helm reads as a number) the
  scalar is refused with the spelling both read alike, and so is every leading-zero integer (`010` is octal 8,
  `08` the decimal 8 to Helm: never a reliable spelling);
- every value must survive Helm's JSON round trip unchanged: no NaN/Infinity, integers within ±MAX_INT, no
  control characters in strings (Helm writes them raw into manifests that no YAML reader accepts), string keys;
- at most MAX_NODES nodes after alias expansion and MAX_DEPTH levels of nesting.

Inside `ledger()`, `read_text` (filereader.py) notes the sha256 of the exact bytes it returned for each path, so
the lint cache keys a result by what was linted, not by what the file holds afterwards (a file renamed over
mid-run).

Errors are `InputError`s with file, line, column, key path and a bounded excerpt of the bad value.
"""

from __future__ import annotations

import math
import re
from typing import Any

import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from . import goyaml
from .errors import InputError, excerpt
from .filereader import MAX_BYTES

MAX_NODES = 200_000  # alias expansion is bounded so an anchors/aliases bomb is an input error, not an OOM kill
MAX_DEPTH = 64  # the deepest shipped values key is 5 levels, the deepest rendered object ~15
# Helm decodes values as JSON numbers (float64): an integer beyond 2**53 silently changes (2**64 renders as
# 18446744073709552000), so such an integer is refused instead of being rounded behind the user's back.
MAX_INT = 2**53

_T = "tag:yaml.org,2002:"
SCALAR_TAGS = frozenset(_T + t for t in ("str", "int", "float", "bool", "null"))
MAP_TAG, SEQ_TAG, MERGE_TAG, TIMESTAMP_TAG = _T + "map", _T + "seq", _T + "merge", _T + "timestamp"
_STR_TAG = _T + "str"
# Tab, newline and carriage return are ordinary text; every other C0/C1 control character and DEL is refused.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")

_LibLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when PyYAML was built with it
_RESOLVED: dict[str, str] = {}  # plain scalar -> its core-schema tag (the answer depends on the text alone)
_RESOLVED_LIMIT = 1 << 16


class BaseLoader(_LibLoader):
    """The core-schema loader with the resolver's answer remembered per plain scalar: the composer asks the
    (Python) resolver once per node, and a manifest stream repeats the same keys and words thousands of times."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        if kind is ScalarNode and implicit[0]:
            tag = _RESOLVED.get(value)
            if tag is None:
                tag = super().resolve(kind, value, implicit)
                if len(_RESOLVED) < _RESOLVED_LIMIT:
                    _RESOLVED[value] = tag
            return tag
        if kind is MappingNode:
            return MAP_TAG
        if kind is SequenceNode:
            return SEQ_TAG
        return super().resolve(kind, value, implicit)

    # The composer calls these around every node for path resolvers, which the core schema has none of.
    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        return None

    def ascend_resolver(self) -> None:
        return None


Span = tuple[int, int, int]  # a document's first line (0-based), the index its line starts at, the index after it


def load_documents(text: str, name: str, helm: bool = True, spans: list[Span] | None = None,
                   duplicates: list[InputError] | None = None) -> list[Any]:
    """Every non-empty YAML document of `text` as plain JSON-safe Python values (see the module docstring).
    `helm=False` for manifest streams, which kubectl and the API server read with sigs.k8s.io/yaml (go-yaml v2):
    a plain octal integer (`defaultMode: 0777`) reads as the same number there and in PyYAML, so it is accepted;
    every other scalar some reader takes otherwise (`y`, `08`, `1e3`, `1:30`) is still refused.
    `spans`, when given, receives where each returned document lies in `text` (positions.documents_at reads one
    document of a long stream alone). `duplicates`, when given, receives each duplicate key as an input error and
    the later value is kept, where otherwise the first duplicate refuses the whole stream."""
    loader = BaseLoader(text)
    try:
        nodes = []
        while loader.check_node():
            nodes.append(loader.get_node())
        budget = [MAX_NODES]
        converter = _Converter(loader, name, budget, text, helm, duplicates)
        read = [(n, converter.plain(n, "", 0)) for n in nodes]
        if spans is not None:
            spans[:] = [(n.start_mark.line, n.start_mark.index - n.start_mark.column, n.end_mark.index)
                        for n, v in read if v is not None]
        return [v for _n, v in read if v is not None]
    except yaml.YAMLError as exc:
        _raise_if_too_deep(text, name)  # libyaml's own depth limit has no key path: find it here
        raise _located(exc, name) from None
    except RecursionError:
        _raise_if_too_deep(text, name)
        raise InputError(name, f"invalid YAML: nested deeper than {MAX_DEPTH} levels") from None
    finally:
        loader.dispose()


# Errors the parser notices only where the input ends or the next token fails: located where the construct opens.
_UNCLOSED = ("while scanning a quoted scalar", "while parsing a flow mapping", "while parsing a flow sequence",
             "while scanning a block scalar", "while parsing a flow node")


def load_input(text: str, name: str, is_manifest: Any, spans: list[Span] | None = None,
               duplicates: list[InputError] | None = None) -> list[Any]:
    """A file of unknown kind as its reader reads it: values files as Helm does; a stream that `is_manifest`
    (its documents are Kubernetes objects) as kubectl does, so the octal `defaultMode: 0777` of every Kubernetes
    example is no error there. `spans` as load_documents fills it; `duplicates` too, for a manifest stream only
    (a values file with a duplicate key stays refused)."""
    try:
        return load_documents(text, name, spans=spans)
    except InputError as exc:
        found: list[InputError] = []
        try:
            docs = load_documents(text, name, helm=False, spans=spans,
                                  duplicates=found if duplicates is not None else None)
        except InputError:
            raise exc from None
        if is_manifest(docs):
            if duplicates is not None:
                duplicates += found
            return docs
        raise


def _located(exc: yaml.YAMLError, name: str) -> InputError:
    problem_mark = getattr(exc, "problem_mark", None)
    context_mark = getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    context = getattr(exc, "context", None) or ""
    if context.startswith(_UNCLOSED) and context_mark is not None:
        what = context.removeprefix("while scanning ").removeprefix("while parsing ")
        at = f" (at line {problem_mark.line + 1}: {problem})" if problem_mark is not None else ""
        return InputError(name, f"invalid YAML: {what} opened here is never closed{at}", context_mark.line + 1,
                          context_mark.column + 1)
    mark = problem_mark or context_mark
    line, col = (mark.line + 1, mark.column + 1) if mark else (None, None)
    return InputError(name, f"invalid YAML: {problem}", line=line, column=col)


_BRACKETS = re.compile(r"[\[\]{}]")


def _raise_if_too_deep(text: str, name: str) -> None:
    """Walk the parse events (no nodes are built) and raise the located error for the first collection nested
    deeper than MAX_DEPTH; return if there is none before the parse error."""
    if len(text) > MAX_BYTES // 5:  # the pure-Python parser below is slow; very large inputs keep libyaml's words
        return
    # Cut the text a little past MAX_DEPTH open flow brackets: the pure-Python scanner's look-ahead through a
    # flow collection is quadratic in its length. A cut in the wrong place (a bracket inside a quoted string)
    # only ends the walk early, without a location.
    depth = 0
    for m in _BRACKETS.finditer(text):
        depth += 1 if m.group() in "[{" else -1
        if depth > MAX_DEPTH + 1:
            text = text[: m.end()]
            break
    stack: list[list[Any]] = []  # [is_mapping, expecting_key, key_or_index]

    def child() -> str:
        return ".".join(str(entry[2]) for entry in stack)

    def consumed(value: Any = None) -> None:
        if not stack:
            return
        top = stack[-1]
        if top[0]:
            if top[1]:
                top[1], top[2] = False, value
            else:
                top[1] = True
        else:
            top[2] += 1

    try:
        # The pure-Python parser: libyaml's scanner looks ahead through a whole flow collection and stops at its
        # own depth limit before emitting the events that would locate it.
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                if len(stack) >= MAX_DEPTH:
                    mark = event.start_mark
                    raise InputError(name, f"nested deeper than {MAX_DEPTH} levels", mark.line + 1, mark.column + 1,
                                     key_path=child() or None)
                stack.append([isinstance(event, yaml.MappingStartEvent), True, -1])
                if not stack[-1][0]:
                    stack[-1][2] = 0
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                stack.pop()
                consumed()
            elif isinstance(event, (yaml.ScalarEvent, yaml.AliasEvent)):
                consumed(getattr(event, "value", None))
            elif isinstance(event, yaml.DocumentEndEvent):
                stack.clear()
    except yaml.YAMLError:
        return


_LEADING_ZERO = re.compile(r"[-+]?0[0-9_]+")
# A plain octal integer: go-yaml v2 (kubectl's reader) and PyYAML both read it as base 8 (Helm's v3 does not).
_OCTAL = re.compile(r"[-+]?0[0-7]+")
_HELM_HINTS = frozenset("+-0123456789.yYnNtTfFoO~")  # first characters go-yaml resolves beyond a string
# A `!` standing alone before a value: YAML's non-specific tag (Helm: a string; PyYAML: resolved as if plain).
_NON_SPECIFIC_TAG = re.compile(r"(?:^|[\s\[{,])!(?=\s)")


def _explicit_tags(text: str) -> dict[tuple[int, int], str]:
    """(line, column) -> tag of every explicitly tagged scalar, from the pure-Python parser's events (the nodes
    of libyaml's composer no longer tell `!!str y` or `! 8` from a plain scalar)."""
    tags = {}
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.ScalarEvent) and event.tag is not None:
                tags[(event.start_mark.line, event.start_mark.column)] = event.tag
    except yaml.YAMLError:
        pass
    return tags


def _reads_as_written(style: str | None, text: str, untagged: bool) -> bool:
    """A string scalar every reader takes as the text it spells: quoted or block (a style), or a plain word whose
    first character no reader resolves beyond a string, in a text with no non-specific `!` tag (`untagged`)."""
    return style not in ("", None) or (untagged and bool(text) and text[0] not in _HELM_HINTS)


def _describe(kind: str, value: Any) -> str:
    if kind == "str":
        return f"the string {excerpt(value)}"
    if kind == "null":
        return "null"
    if kind == "bool":
        return f"the boolean {'true' if value else 'false'}"
    return f"the number {value!r}"


def _kind_of(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if value is None:
        return "null"
    return "str" if isinstance(value, str) else "number"


class _Converter:
    def __init__(self, loader: Any, name: str, budget: list[int], text: str = "", helm: bool = True,
                 duplicates: list[InputError] | None = None):
        self.loader, self.name, self.budget, self.text, self.helm = loader, name, budget, text, helm
        self.duplicates = duplicates
        self._tags: dict[tuple[int, int], str] | None = None
        if "!" in text and _NON_SPECIFIC_TAG.search(text):
            self._tags = _explicit_tags(text)
        # Plain, single-quoted and block scalars hold only characters of the text: without a control character
        # there, only double-quoted scalars (escapes such as "\x01") need checking.
        self._text_clean = _CONTROL.search(text) is None if text else False

    def explicit_tag(self, node: Any) -> str | None:
        if self._tags is None:
            self._tags = _explicit_tags(self.text)
        return self._tags.get((node.start_mark.line, node.start_mark.column))

    def check_helm_reading(self, node: ScalarNode, value: Any, path: str, what: str = "value") -> Any:
        """The value of a plain scalar as Helm reads it: PyYAML's where both agree, Helm's number where only
        Helm reads one (`1e-6`, `1E6`, `+.5`, `0o17`: YAML 1.1 reads a string); refuse every other disagreement
        (`y`, `1:30`, `! 8`, a number key) and every leading-zero integer."""
        text = node.value
        if isinstance(value, str) and _reads_as_written(node.style, text, self._tags is None):
            return value
        if node.style not in ("", None):
            return value  # quoted or block scalars are strings to both readers
        if self._tags is None and type(value) is int and text.isdigit() and (text[0] != "0" or text == "0"):
            return value  # a plain decimal, decided without the restated resolver
        if not self.helm and _OCTAL.fullmatch(text or ""):
            return value  # a plain octal integer reads alike in kubectl's reader and PyYAML
        if self._tags is not None and self.explicit_tag(node) == "!":
            if isinstance(value, str) and value == text:
                return value
            raise self.error(node, f"the non-specific tag `!` makes {excerpt(text)} a string to Helm but "
                             f"{_describe(_kind_of(value), value)} here; drop the `!` and quote the value for a "
                             "string, or drop it alone for the number", path)
        leading_zero = _LEADING_ZERO.fullmatch(text) is not None
        kind, helm = goyaml.plain_scalar(text)
        agree = (kind == _kind_of(value) == "str" and helm == value) or (kind == "bool" and helm is value) \
            or (kind == "null" and value is None) or (kind in ("int", "float") and _kind_of(value) == "number"
                                                      and helm == value)
        if agree and not leading_zero:
            return value
        tag = self.explicit_tag(node)
        if tag is not None and tag != "!" and not (leading_zero and tag in (_T + "int", _T + "float")):
            return value  # an explicit core tag (`!!str y`, `!!int 8`) reads alike in both
        if kind in ("int", "float") and not leading_zero and what != "key":
            return helm  # a number to Helm (`1e-6`, verl's own spelling): read as Helm reads it
        if leading_zero:
            digits = text.replace("_", "").lstrip("+-").lstrip("0") or "0"
            sign = "-" if text.startswith("-") else ""
            raise self.error(node, f"{what} {excerpt(text)} has a leading zero (Helm and YAML 1.1 read octal or "
                             f"refuse it, never the decimal typed): write {sign}{digits} for the number, or quote "
                             f"it ({text!r}) for a string", path)
        if what == "key":
            raise self.error(node, f"key {excerpt(text)} is {_describe(kind, helm)} to Helm, not a string; quote "
                             f"it ({text!r})", path)
        mine = _describe(_kind_of(value), value)
        meant = _canonical(kind, helm) if kind != "str" else _canonical(_kind_of(value), value)
        other = f", or write {meant} for the {'number' if meant[0] in '-0123456789' else 'value'}" if meant else ""
        raise self.error(node, f"{excerpt(text)} is {_describe(kind, helm)} to Helm but {mine} to YAML 1.1 "
                         f"readers (grpo-lint, PyYAML); quote it ({text!r}) for the string{other}", path)

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
        first: dict[str, Any] = {}  # key -> its node (where a duplicate's first occurrence is)
        merged: list[dict[str, Any]] = []
        prefix = f"{path}." if path else ""
        clean, untagged, budget = self._text_clean, self._tags is None, self.budget
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
            child = prefix + key
            style = key_node.style
            if not clean or style == '"':
                self.check_text(key_node, key, child, "key")
            if not _reads_as_written(style, key, untagged):
                self.check_helm_reading(key_node, key, child, "key")
            if key in first:
                message = f"duplicate key {excerpt(key)} (first at line {first[key].start_mark.line + 1})"
                if self.duplicates is None:
                    raise self.error(key_node, message, child)
                # kubectl refuses the file; the rest of it is still worth reading (the later value is kept)
                self.duplicates.append(self.error(key_node, f"{message}; kubectl refuses the file (the later "
                                                  "value is linted)", child))
            first[key] = key_node
            # The common value, a string, read here with the checks scalar() makes of it; all else in plain().
            if value_node.__class__ is ScalarNode and value_node.tag == _STR_TAG and budget[0] > 0 \
                    and depth < MAX_DEPTH:
                text, value_style = value_node.value, value_node.style
                if _reads_as_written(value_style, text, untagged):
                    budget[0] -= 1
                    if not clean or value_style == '"':
                        self.check_text(value_node, text, child, "string")
                    out[key] = text
                    continue
            out[key] = self.plain(value_node, child, depth + 1)
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
        try:  # the tag's constructor directly: construct_object's bookkeeping serves aliases, which plain() expands
            value = node.value if node.tag == _STR_TAG else self.loader.yaml_constructors[node.tag](self.loader, node)
        except (ValueError, KeyError, TypeError, OverflowError, yaml.YAMLError):
            raise self.error(node, f"{excerpt(node.value)} is not a valid {_short(node.tag)}", path) from None
        value = self.check_helm_reading(node, value, path)
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
        if self._text_clean and node.style != '"':
            return
        found = _CONTROL.search(text)
        if found is not None:
            bad = found.group()
            raise self.error(node, f"{what} {excerpt(text)} contains the control character {bad!r} "
                             f"(U+{ord(bad):04X}); only tab and newline are allowed", path)


def _canonical(kind: str, value: Any) -> str:
    """The spelling both readers read as `value` (the fix offered for a divergent scalar)."""
    if kind == "bool":
        return "true" if value else "false"
    if kind == "null":
        return "null"
    if kind == "int" or (kind == "number" and isinstance(value, int)):
        return str(value)
    if kind in ("float", "number"):
        return repr(value)
    return ""


def _join(path: str, part: Any) -> str:
    return f"{path}.{part}" if path else str(part)


def _short(tag: str) -> str:
    return "!!" + tag[len(_T):] if tag.startswith(_T) else tag
