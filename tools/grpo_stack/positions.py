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

# No implicit resolution: positions need no types, and the resolver is Python code called once per scalar.
_Loader = getattr(yaml, "CBaseLoader", yaml.BaseLoader)
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
    loader = _Loader(text)
    try:
        nodes = []
        while loader.check_node():
            nodes.append(loader.get_node())
    except yaml.YAMLError:
        return None
    finally:
        loader.dispose()
    return Documents([n for n in nodes if not (isinstance(n, ScalarNode) and n.value == "")])


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


def _convert(node: Any, memo: dict[int, Any]) -> Any:
    if id(node) in memo:  # an alias: the anchored node, converted once
        return memo[id(node)]
    if isinstance(node, ScalarNode):
        return node.value
    if isinstance(node, SequenceNode):
        seq = PosSeq()
        memo[id(node)] = seq
        for i, item in enumerate(node.value):
            at = (item.start_mark.line, item.start_mark.column)
            seq.append(_used(item, at, memo))
            seq.lc.data[i] = at
        return seq
    out = PosMap()
    memo[id(node)] = out
    merged: list[tuple[Any, tuple[int, int]]] = []
    for key_node, value_node in node.value if isinstance(node, MappingNode) else []:
        at = (key_node.start_mark.line, key_node.start_mark.column)
        if key_node.tag == _MERGE or (isinstance(key_node, ScalarNode) and key_node.value == "<<"
                                      and key_node.style in ("", None)):
            sources = _convert(value_node, memo)
            merged += [(s, at) for s in (sources if isinstance(sources, PosSeq) else [sources])]
            continue
        key = key_node.value if isinstance(key_node, ScalarNode) else repr(id(key_node))
        out[key] = _used(value_node, at, memo)
        out.lc.data[key] = at
    for source, at in merged:
        if isinstance(source, PosMap):
            for k, v in source.items():
                if k not in out:
                    out[k] = _relocated(v, at, set())
                    out.lc.data[k] = at
    return out


def _used(node: Any, at: tuple[int, int], memo: dict[int, Any]) -> Any:
    """The converted value of `node` placed at `at`; an alias's anchored container is located there too."""
    alias = id(node) in memo
    value = _convert(node, memo)
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
