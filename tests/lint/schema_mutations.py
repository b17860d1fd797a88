"""Changes to a document where a compiled schema check and jsonschema could disagree: wrong types, 1.0 and True
for integers, numbers past a bound, unknown keys, a required key removed, a word outside an enum or pattern, null
items."""

from __future__ import annotations

import copy
import random


def _paths(node, path=()):
    yield path, node
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, (*path, i))


def _set(obj, path, value):
    node = obj
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value


def mutations(obj: dict, rng: random.Random, count: int = 12):
    """`count` paths of `obj`, each changed to the values a hand-compiled schema check is most likely to judge
    differently from jsonschema (a copy per change)."""
    paths = [p for p, _ in _paths(obj) if p]
    for path in rng.sample(paths, min(count, len(paths))):
        node = obj
        for part in path:
            node = node[part]
        if isinstance(node, bool):
            options = ["true", 1]
        elif isinstance(node, int):
            options = [str(node), float(node), node + 0.5, True, -node - 1, 0]
        elif isinstance(node, float):
            options = [str(node), -node - 1.0, int(node), 0.0]
        elif isinstance(node, str):
            options = [7, None, ["x"], node + "-not-in-any-enum", ""]
        elif isinstance(node, dict):
            options = [{**node, "bogusField": 1}, [], dict(list(node.items())[1:])]
        else:
            options = [{}, [None], "x"]
        for value in options:
            changed = copy.deepcopy(obj)
            _set(changed, path, value)
            yield changed
