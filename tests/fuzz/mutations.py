"""Mutations of real inputs (the shipped values files, the manifests they render) for the fuzz tests.

Generic over the schema: key paths are discovered from each document, so the fuzz test follows whatever the
values model and the chart become. A mutation changes ONE key path (or writes one odd file); `path` is that key
path, dotted like grpo-lint's `key_path` (list items by index), relative to the document root.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import yaml

PLACEHOLDER = "zzgrpofuzzplaceholderzz"

# Raw YAML text put where one value was: each is a value grpo-lint must refuse or accept, never crash on.
HUGE = ["9007199254740993", "18446744073709551616", "1180591620717411303424", "-9223372036854775809",
        "1" + "0" * 4000, "1e308", "-1e308", "1e400", "0.0000001", "5e-324", "2.5e+21"]
NONFINITE = [".nan", ".NaN", ".inf", "-.inf", ".Inf", "+.inf"]
TAGS = ['!!int "abc"', "!!map [1, 2]", "!!seq {a: 1}", "!!binary aGVsbG8=", "!!set {a, b}", '!!float "x"',
        '!!bool "maybe"', "!!timestamp 2020-01-01", "!!python/object:os.system x", "!custom 1",
        "!!str 5", '!!null ""', "!!omap [a: 1]", "2026-11-30", "!!int 0x1F", "!!float 1_000.5"]
CONTROL = ['"a\\x7fb"', '"\\x1b[31mred"', '"nul\\0byte"', '"\\x85next"', '"bell\\a"', '"back\\bspace"',
           '"\\x9b"', '"ok\\ttab"', '"ok\\nnewline"']
# Strings Hydra misreads unquoted (a sweep, a float, an interpolation, a parse error) in any string value.
HYDRA = ['"run=2"', '"run (v2)"', '"it\'s"', '"café"', '"two\\nlines"', '"a,b"', '"-1e309"', '"${oc.env:HF_TOKEN}"',
         '"???"', '"[x]"', '"{a: 1}"', "'back\\'", "'\\${x}'", '"true"', '"null"', '"1:30"']
# Plain scalars Helm's go-yaml and YAML 1.1 read differently, leading-zero integers, the non-specific tag.
# Scalars Helm reads otherwise than YAML 1.1 and grpo-lint refuses wherever they stand (a number to Helm alone,
# `1e3`, is accepted; `._5`, a string to Helm and 0.5 to YAML 1.1, is read as Helm reads it, so a string key takes
# it: tests/values/test_helm_scalar_reading.py).
HELM_SCALARS = ["y", "n", "Y", "N", "1:30", "08", "010", "! 8", "! true", "-010", "0_7"]
SWAPS = ['"a string"', "0", "-1", "1", "true", "false", "null", "[]", "{}", "[1, 2]", "{a: 1}", "1.5", '""',
         "[[]]", "{metadata: true}", "true"]


def nested(depth: int, kind: str) -> str:
    return "[" * depth + "1" + "]" * depth if kind == "list" else "{a: " * depth + "1" + "}" * depth


@dataclass(frozen=True)
class Mutation:
    kind: str  # one of KINDS
    path: str  # the one key path mutated ("" for whole-file mutations)
    text: str  # the file content (UTF-8)
    snippet: str = ""  # the YAML written at `path`, for the kinds drawn from a pool


def key_paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    """Every key path of a document (a tuple of keys and list indices: label keys contain dots), depth first."""
    out: list[tuple] = []
    if isinstance(node, dict):
        items = node.items()
    elif isinstance(node, list):
        items = enumerate(node)
    else:
        return out
    for k, v in items:
        path = (*prefix, k)
        out.append(path)
        out += key_paths(v, path)
    return out


def _parent(doc: Any, path: tuple) -> tuple[Any, Any]:
    node = doc
    for p in path[:-1]:
        node = node[p]
    return node, path[-1]


def dotted(path: tuple) -> str:
    """As grpo-lint writes a key path."""
    return ".".join(str(p) for p in path)


def dump(docs: list[Any]) -> str:
    return yaml.safe_dump_all(docs, sort_keys=False, width=10_000, allow_unicode=False)


def mutate(docs: list[Any], doc_index: int, key_path: tuple, kind: str, choice: int) -> Mutation:
    """Mutation `kind` (variant `choice`) of the value at `key_path` in document `doc_index` of `docs`."""
    docs = copy.deepcopy(docs)
    parent, leaf = _parent(docs[doc_index], key_path)
    path, above = dotted(key_path), dotted(key_path[:-1])
    if kind == "delete":
        del parent[leaf]
        # Removing a list item changes the list (later items move up): the list is the mutated key.
        return Mutation(kind, above if isinstance(parent, list) else path, dump(docs))
    if kind == "badkey":  # a sibling key that is not a string / is a duplicate / holds a control character
        if not isinstance(parent, dict):
            return mutate(docs, doc_index, key_path, "swap", choice)
        key = ["1", "true", "null", "[a, b]", f"{leaf}", '"bad\\x7fkey"'][choice % 6]
        parent[leaf] = PLACEHOLDER
        text = dump(docs)
        line = next(ln for ln in text.splitlines() if PLACEHOLDER in ln)
        indent = line[: len(line) - len(line.lstrip())]
        if line.lstrip().startswith("- "):  # a list item mapping: the key sits after the dash
            indent += "  "
        text = text.replace(line, f"{line}\n{indent}{key}: 1", 1)
        # The mutated key path is the parent's; a duplicate is reported at the key itself.
        where = path if key == f"{leaf}" else above
        return Mutation(kind, where, text.replace(PLACEHOLDER, '"x"', 1))
    if kind == "merge":  # the value behind a YAML merge key (`<<`), which Helm reads as the value itself
        value = parent[leaf]
        inner = yaml.safe_dump(value, default_flow_style=True, width=10**9).strip() if isinstance(value, dict) \
            and value else "{fuzzmergedkey: 1}"
        parent[leaf] = PLACEHOLDER
        return Mutation(kind, path, dump(docs).replace(PLACEHOLDER, "{<<: " + inner + "}", 1))
    pool = {"swap": SWAPS, "huge": HUGE, "nonfinite": NONFINITE, "tag": TAGS, "control": CONTROL,
            "hydra": HYDRA, "helmscalar": HELM_SCALARS}.get(kind)
    if pool is not None:
        snippet = pool[choice % len(pool)]
    elif kind == "nesting":
        snippet = nested([8, 40, 70, 300, 3000][choice % 5], "list" if choice % 2 else "map")
    elif kind == "longstring":
        snippet = '"' + "x" * [1_000, 200_000, 1_500_000][choice % 3] + '"'
    else:
        raise ValueError(kind)
    parent[leaf] = PLACEHOLDER
    return Mutation(kind, path, dump(docs).replace(PLACEHOLDER, snippet, 1), snippet)


KINDS = ("delete", "swap", "huge", "nonfinite", "tag", "control", "nesting", "longstring", "badkey", "merge", "hydra",
         "helmscalar")
