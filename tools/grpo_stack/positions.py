"""Line and column of every key and item of a YAML text, for locating findings: libyaml's composer (C, linear),
not a round-trip parser, so locating one error in a 1.6 MB file of 150,000 keys costs one pass of C.

`load(text)` gives documents of `PosMap` (a dict) and `PosSeq` (a list), each with `.lc.key(k)` / `.lc.item(i)`
-> (line, column), 0-based, as ruamel's round-trip types spell it. What a merge (`<<`) or an alias (`*name`)
brings in is located where it is used, at the `<<` or the aliased key, for every key under it: the key path a
finding names is the one at that place (the anchor may be right where it is defined and wrong where it is
merged). Scalars are kept as their text (positions never need the value). Each document is converted the first
time it is read: locating a finding in one object of a long stream converts that object's document only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

_BaseLoader = getattr(yaml, "CBaseLoader", yaml.BaseLoader)


class _Loader(_BaseLoader):
    """No implicit resolution (positions need no types) and no path resolvers: the composer calls these Python
    methods once per node, and they answer without looking."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        return self.DEFAULT_SCALAR_TAG if kind is ScalarNode else (
            self.DEFAULT_SEQUENCE_TAG if kind is SequenceNode else self.DEFAULT_MAPPING_TAG)

    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        return None

    def ascend_resolver(self) -> None:
        return None

_MERGE = "tag:yaml.org,2002:merge"


class _Lines:
    __slots__ = ("data",)

    def __init__(self) -> None:
        self.data: dict[Any, tuple[int, int]] = {}

    def key(self, k: Any) -> tuple[int, int] | None:
        return self.data.get(k)

    item = key


class PosMap(dict):
    def __init__(self) -> None:
        super().__init__()
        self.lc = _Lines()


class PosSeq(list):
    def __init__(self) -> None:
        super().__init__()
        self.lc = _Lines()


def load(text: str) -> Documents | None:
    """The position documents of `text` (empty documents dropped), or None when libyaml cannot read it."""
    nodes = _compose(text)
    if nodes is None:
        return None
    return Documents([n for n in nodes if not (isinstance(n, ScalarNode) and n.value == "")])


def _compose(text: str) -> list[Any] | None:
    """libyaml's node of each document of `text`, or None when it cannot read it."""
    loader = _Loader(text)
    try:
        nodes = []
        while loader.check_node():
            nodes.append(loader.get_node())
    except yaml.YAMLError:
        return None
    finally:
        loader.dispose()
    return nodes


def documents_at(text: str, spans: Sequence[tuple[int, int, int]]) -> Sequence[Any]:
    """The position documents of `text` whose documents lie at `spans` (safeyaml.load_documents: first line, the
    index its line starts at, the index after the document), each composed alone when first read: a finding in one
    object of a 10,000-object stream composes that object. A slice that does not compose to one document (a
    %TAG directive above it) falls back to the whole text."""
    return _Sliced(text, spans)


class _Sliced(Sequence):
    def __init__(self, text: str, spans: Sequence[tuple[int, int, int]]):
        self._text, self._spans = text, spans
        self._converted: dict[int, Any] = {}
        self._whole: Documents | None = None

    def __len__(self) -> int:
        return len(self._spans)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        index = range(len(self._spans))[index]
        if index not in self._converted:
            line, start, end = self._spans[index]
            node = _only_node(self._text[start:end])
            if node is None:
                if self._whole is None:
                    self._whole = load(self._text) or Documents([])
                return self._whole[index] if index < len(self._whole) else None
            self._converted[index] = _convert(node, {}, line)
        return self._converted[index]


def _only_node(text: str) -> Any:
    nodes = _compose(text)
    return nodes[0] if nodes is not None and len(nodes) == 1 else None


class Documents(Sequence):
    """Position documents, each converted from libyaml's nodes when first read (anchors live in one document, so
    each is converted on its own)."""

    def __init__(self, nodes: list[Any]):
        self._nodes = nodes
        self._converted: dict[int, Any] = {}

    def __len__(self) -> int:
        return len(self._nodes)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        index = range(len(self._nodes))[index]  # negative indices, and IndexError past the end
        if index not in self._converted:
            self._converted[index] = _convert(self._nodes[index], {})
        return self._converted[index]


def _convert(node: Any, memo: dict[int, Any], line: int = 0) -> Any:
    """`line`: the text's first line in the file it was cut from (documents_at)."""
    if id(node) in memo:  # an alias: the anchored node, converted once
        return memo[id(node)]
    if isinstance(node, ScalarNode):
        return node.value
    if isinstance(node, SequenceNode):
        seq = PosSeq()
        memo[id(node)] = seq
        for i, item in enumerate(node.value):
            at = (item.start_mark.line + line, item.start_mark.column)
            seq.append(_used(item, at, memo, line))
            seq.lc.data[i] = at
        return seq
    out = PosMap()
    memo[id(node)] = out
    merged: list[tuple[Any, tuple[int, int]]] = []
    for key_node, value_node in node.value if isinstance(node, MappingNode) else []:
        at = (key_node.start_mark.line + line, key_node.start_mark.column)
        if key_node.tag == _MERGE or (isinstance(key_node, ScalarNode) and key_node.value == "<<"
                                      and key_node.style in ("", None)):
            sources = _convert(value_node, memo, line)
            merged += [(s, at) for s in (sources if isinstance(sources, PosSeq) else [sources])]
            continue
        key = key_node.value if isinstance(key_node, ScalarNode) else repr(id(key_node))
        out[key] = _used(value_node, at, memo, line)
        out.lc.data[key] = at
    for source, at in merged:
        if isinstance(source, PosMap):
            for k, v in source.items():
                if k not in out:
                    out[k] = _relocated(v, at, set())
                    out.lc.data[k] = at
    return out


def _used(node: Any, at: tuple[int, int], memo: dict[int, Any], line: int = 0) -> Any:
    """The converted value of `node` placed at `at`; an alias's anchored container is located there too."""
    alias = id(node) in memo
    value = _convert(node, memo, line)
    return _relocated(value, at, set()) if alias else value


def _relocated(value: Any, at: tuple[int, int], seen: set[int]) -> Any:
    """A copy of an anchored container with every position `at` (a recursive anchor is copied once)."""
    if not isinstance(value, (PosMap, PosSeq)) or id(value) in seen:
        return value
    seen.add(id(value))
    out: PosMap | PosSeq
    if isinstance(value, PosMap):
        out = PosMap()
        for k, v in value.items():
            out[k] = _relocated(v, at, seen)
            out.lc.data[k] = at
    else:
        out = PosSeq()
        for i, v in enumerate(value):
            out.append(_relocated(v, at, seen))
            out.lc.data[i] = at
    return out
