"""Extract every argparse flag a program defines by PARSING its source (ast), never importing it.

miles is not on PyPI and its start-up imports CUDA libraries, so the flag catalogue the builder is checked against
(`miles_flags.json`) is regenerated from checkouts with this module:

    python -m grpo_stack.catalog.argparse_extract miles \\
        --miles /path/to/miles --miles-commit <sha> \\
        --megatron /path/to/Megatron-LM --megatron-commit <sha> \\
        -o tools/grpo_stack/catalog/miles_flags.json

Understood definitions, in the order the program adds them (a later definition wins, as in argparse with
`conflict_handler` semantics the programs rely on):
- `<anything>.add_argument("--flag", ..., nargs=, type=, choices=, default=, action=, dest=)`;
- miles' `reset_arg(parser, "--flag", **kw)`: changes only the default of an existing flag, else adds it;
- Megatron's `ArgumentGroupFactory(SomeConfig, exclude=[...])`: one flag per dataclass field, with the same
  type/nargs/choices/bool rules as `megatron/training/argument_utils.py` (fields of base classes included,
  `field(metadata={"argparse_meta": {...}})` overrides, `init=False` fields skipped).
Values that are not literals (a default computed from a call, a `type=` function) are kept as their source text.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ZERO_ARITY_ACTIONS = {"store_true", "store_false", "store_const", "count", "help", "version",
                      "append_const"}


@dataclass
class Flag:
    names: list[str]
    dest: str | None = None
    nargs: Any = None
    type: str | None = None
    choices: Any = None
    default: Any = None
    action: str | None = None
    source: str = ""

    def record(self) -> dict[str, Any]:
        return {"dest": self.dest, "nargs": self.nargs, "type": self.type, "choices": self.choices,
                "default": self.default, "action": self.action, "aliases": self.names, "source": self.source}


def _text(node: ast.AST) -> str:
    return ast.unparse(node)


class _Module:
    """One parsed source file: module-level literal constants resolve `choices=SOME_LIST`."""

    def __init__(self, path: Path, rel: str):
        self.rel = rel
        self.tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        self.constants: dict[str, Any] = {}
        for node in self.tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                try:
                    self.constants[node.targets[0].id] = ast.literal_eval(node.value)
                except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                    pass

    def value(self, node: ast.AST) -> Any:
        """A literal, a module constant, or {"expr": source text}."""
        try:
            return ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            pass
        if isinstance(node, ast.Name) and node.id in self.constants:
            return self.constants[node.id]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("list", "sorted") \
                and node.args and isinstance(node.args[0], ast.Name) and node.args[0].id in self.constants:
            return list(self.constants[node.args[0].id])
        return {"expr": _text(node)}


class ClassIndex:
    """Finds dataclass definitions by name inside a checkout (for ArgumentGroupFactory)."""

    def __init__(self, root: Path, package: str):
        self.root = root
        self.package = package
        self._cache: dict[str, tuple[_Module, ast.ClassDef] | None] = {}

    def find(self, name: str) -> tuple[_Module, ast.ClassDef] | None:
        if name not in self._cache:
            self._cache[name] = None
            needles = (f"class {name}(", f"class {name}:")
            for path in sorted((self.root / self.package).rglob("*.py")):
                text = path.read_text(encoding="utf-8", errors="replace")
                if not any(n in text for n in needles):
                    continue
                mod = _Module(path, str(path.relative_to(self.root)))
                for node in ast.walk(mod.tree):
                    if isinstance(node, ast.ClassDef) and node.name == name:
                        self._cache[name] = (mod, node)
                        break
                if self._cache[name]:
                    break
        return self._cache[name]


def _dataclass_fields(index: ClassIndex, name: str,
                      seen: frozenset = frozenset()) -> list[tuple[_Module, ast.AnnAssign]]:
    found = index.find(name)
    if found is None or name in seen:
        return []
    mod, cls = found
    out: list[tuple[_Module, ast.AnnAssign]] = []
    for base in cls.bases:  # dataclasses.fields() lists base-class fields first
        if isinstance(base, ast.Name):
            out += _dataclass_fields(index, base.id, seen | {name})
    own = [(mod, n) for n in cls.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)
           and "ClassVar" not in _text(n.annotation)]
    names = {n.target.id for _, n in own}
    return [f for f in out if f[1].target.id not in names] + own


def _annotation_kwargs(index: ClassIndex, ann: ast.AST) -> dict[str, Any] | None:
    """Megatron's ArgumentGroupFactory._extract_type on source; None where it raises TypeInferenceError."""
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        ann = ast.parse(ann.value, mode="eval").body
    if isinstance(ann, ast.Name):
        if ann.id in ("int", "float", "str", "bool"):
            return {"type": ann.id}
        found = index.find(ann.id)
        if found and any(_text(b).endswith("Enum") for b in found[1].bases):
            members = [t.id for n in found[1].body if isinstance(n, ast.Assign)
                       for t in n.targets if isinstance(t, ast.Name)]
            return {"type": f"enum:{ann.id}", "choices": members}
        return {"type": ann.id}
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):  # X | None
        if _text(ann.right) == "None":
            return _annotation_kwargs(index, ann.left)
        return None
    if isinstance(ann, ast.Subscript):
        head = _text(ann.value).rsplit(".", 1)[-1]
        inner = ann.slice
        parts = inner.elts if isinstance(inner, ast.Tuple) else [inner]
        if head == "Optional":
            return _annotation_kwargs(index, parts[0])
        if head == "Union":
            return _annotation_kwargs(index, parts[0]) if len(parts) == 2 and _text(parts[1]) == "None" else None
        if head in ("list", "List") and len(parts) == 1:
            kw = _annotation_kwargs(index, parts[0])
            return None if kw is None else {**kw, "nargs": "+"}
        if head == "Literal":
            choices = [ast.literal_eval(p) for p in parts]
            return {"type": type(choices[0]).__name__, "choices": choices}
    return None


def _field_flag(mod: _Module, index: ClassIndex, node: ast.AnnAssign, cls: str) -> Flag | None:
    name = node.target.id
    default: Any = None
    meta: dict[str, Any] | None = None
    if isinstance(node.value, ast.Call) and _text(node.value.func).rsplit(".", 1)[-1] == "field":
        kws = {k.arg: k.value for k in node.value.keywords}
        if "init" in kws and mod.value(kws["init"]) is False:
            return None
        if "default" in kws:
            default = mod.value(kws["default"])
        elif "default_factory" in kws:
            fac = _text(kws["default_factory"])
            default = {"list": [], "dict": {}, "set": []}.get(fac, {"expr": f"{fac}()"})
        if "metadata" in kws and isinstance(kws["metadata"], ast.Dict):
            for k, v in zip(kws["metadata"].keys, kws["metadata"].values, strict=True):
                if isinstance(k, ast.Constant) and k.value == "argparse_meta" and isinstance(v, ast.Dict):
                    meta = {}
                    for mk, mv in zip(v.keys, v.values, strict=True):
                        if isinstance(mk, ast.Constant):
                            meta[mk.value] = _text(mv) if mk.value == "type" else mod.value(mv)
    elif node.value is not None:
        default = mod.value(node.value)
    flag = Flag(names=["--" + name.replace("_", "-")], dest=name, default=default,
                source=f"{mod.rel}:{node.lineno} ({cls}.{name})")
    kw = _annotation_kwargs(index, node.annotation)
    if kw is None and meta is None:
        flag.type = f"unsupported:{_text(node.annotation)}"  # Megatron itself raises here
    if kw:
        flag.type, flag.nargs, flag.choices = kw.get("type"), kw.get("nargs"), kw.get("choices")
        if flag.type == "bool":
            flag.type = None
            flag.action = "store_true" if default == False else "store_false"  # noqa: E712  (mirrors Megatron)
            if flag.action == "store_false":
                flag.names = ["--no-" + name.replace("_", "-"), "--disable-" + name.replace("_", "-")]
    if meta:
        if "arg_names" in meta:
            flag.names = list(meta["arg_names"])
        for key in ("nargs", "type", "choices", "default", "action", "dest"):
            if key in meta:
                setattr(flag, key, meta[key])
    return flag


def _exclude_list(mod: _Module, func: ast.AST | None, node: ast.AST) -> list[str]:
    if isinstance(node, ast.Name) and func is not None:
        value: list[str] = []
        for stmt in ast.walk(func):
            if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == node.id
                                                    for t in stmt.targets) and stmt.lineno < node.lineno:
                v = mod.value(stmt.value)
                value = list(v) if isinstance(v, list) else value
        return value
    v = mod.value(node)
    return list(v) if isinstance(v, list) else []


def extract_file(root: Path, rel: str, index: ClassIndex | None = None) -> tuple[list[Flag], list[str]]:
    """Flags defined in one file, in source order, and the definitions that could not be read."""
    mod = _Module(root / rel, rel)
    flags: list[Flag] = []
    unread: list[str] = []
    parents: dict[ast.AST, ast.AST] = {}
    for node in ast.walk(mod.tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node

    def enclosing_function(node: ast.AST) -> ast.AST | None:
        while node in parents:
            node = parents[node]
            if isinstance(node, ast.FunctionDef):
                return node
        return None

    calls = sorted((n for n in ast.walk(mod.tree) if isinstance(n, ast.Call)),
                   key=lambda n: (n.lineno, n.col_offset))
    for call in calls:
        fname = _text(call.func).rsplit(".", 1)[-1]
        if fname in ("add_argument", "reset_arg"):
            positional = call.args[1:] if fname == "reset_arg" else call.args
            names = [a.value for a in positional if isinstance(a, ast.Constant) and isinstance(a.value, str)
                     and a.value.startswith("-")]
            if not names:
                if positional:  # a computed name (e.g. a wrapper re-adding prefixed flags)
                    unread.append(f"{rel}:{call.lineno}: {_text(call)[:120]}")
                continue
            kws = {k.arg: k.value for k in call.keywords if k.arg}
            flag = Flag(names=names, source=f"{rel}:{call.lineno}")
            flag.reset = fname == "reset_arg"  # type: ignore[attr-defined]
            for key in ("nargs", "choices", "default", "dest"):
                if key in kws:
                    setattr(flag, key, mod.value(kws[key]))
            if "type" in kws:
                flag.type = _text(kws["type"]) if not isinstance(kws["type"], ast.Lambda) else "lambda"
            if "action" in kws:
                act = kws["action"]
                flag.action = act.value if isinstance(act, ast.Constant) else _text(act)
                if flag.action.endswith("BooleanOptionalAction"):
                    flag.names += ["--no-" + n[2:] for n in names if n.startswith("--")]
                if "default" not in kws and flag.action in ("store_true", "store_false"):
                    flag.default = flag.action == "store_false"  # argparse's implied default
            flags.append(flag)
        elif fname == "ArgumentGroupFactory" and call.args and index is not None:
            cls = _text(call.args[0])
            exclude = set()
            for k in call.keywords:
                if k.arg == "exclude":
                    exclude = set(_exclude_list(mod, enclosing_function(call), k.value))
            fields = _dataclass_fields(index, cls)
            if not fields:
                unread.append(f"{rel}:{call.lineno}: dataclass {cls} not found")
            for fmod, fnode in fields:
                if fnode.target.id in exclude:
                    continue
                f = _field_flag(fmod, index, fnode, cls)
                if f is not None:
                    f.source = f"{rel}:{call.lineno} via {f.source}"
                    flags.append(f)
    return flags, unread


@dataclass
class Catalogue:
    flags: dict[str, dict[str, Any]] = field(default_factory=dict)
    unread: list[str] = field(default_factory=list)

    def add(self, flags: list[Flag]) -> None:
        for f in flags:
            if getattr(f, "reset", False):
                existing = next((self.flags[n] for n in f.names if n in self.flags), None)
                if existing is not None:  # miles' reset_arg only moves the default of an existing flag
                    existing["default"] = f.default
                    existing["source"] += f"; default reset at {f.source}"
                    continue
            rec = f.record()
            for n in f.names:
                self.flags[n] = rec


# What miles' train.py parses with the Megatron backend (miles/utils/arguments.py: parse_args ->
# megatron.training.arguments.parse_args(extra_args_provider=add_miles_arguments)), in definition order.
MEGATRON_FILES = ["megatron/training/arguments.py"]
MILES_FILES = ["miles/utils/arguments.py", "miles/dashboard/args.py", "miles/backends/sglang_utils/arguments.py"]
NOT_EXTRACTED = [{
    "flags": "--sglang-<server-arg>",
    "why": "miles adds SGLang's ServerArgs.add_cli_args() at run time with a --sglang- prefix "
           "(miles/backends/sglang_utils/arguments.py). The image's SGLang build (sglang-miles branch) is not "
           "readable here, so those flags are not extracted; the few the builder emits are listed under "
           "`unverified` with the shape miles' own recipes use.",
}]
# Flags the builder emits that come from the SGLang tree above: shape from miles' recipes (scripts/run-qwen3-4B.sh).
UNVERIFIED = {
    "--sglang-mem-fraction-static": {"dest": "sglang_mem_fraction_static", "nargs": None, "type": "float",
                                     "choices": None, "default": None, "action": None,
                                     "aliases": ["--sglang-mem-fraction-static"],
                                     "source": "not extracted: SGLang ServerArgs.mem_fraction_static "
                                               "(used by miles scripts/run-qwen3-4B.sh)"},
}


def build_miles_catalogue(miles: Path, miles_commit: str, megatron: Path, megatron_commit: str,
                          megatron_note: str = "") -> dict[str, Any]:
    cat = Catalogue()
    index = ClassIndex(megatron, "megatron")
    for rel in MEGATRON_FILES:
        flags, unread = extract_file(megatron, rel, index)
        cat.add(flags)
        cat.unread += unread
    for rel in MILES_FILES:
        flags, unread = extract_file(miles, rel, index)
        cat.add(flags)
        cat.unread += unread
    return {
        "generator": "python -m grpo_stack.catalog.argparse_extract miles (parses source; never imports it)",
        "sources": [
            {"repository": "radixark/miles", "commit": miles_commit, "files": MILES_FILES},
            {"repository": "radixark/Megatron-LM", "commit": megatron_commit, "files": MEGATRON_FILES,
             "note": megatron_note},
        ],
        "not_extracted": NOT_EXTRACTED,
        "unread_definitions": cat.unread,
        "unverified": UNVERIFIED,
        "flags": dict(sorted(cat.flags.items())),
    }


def dump(out: dict[str, Any]) -> str:
    """JSON with one flag per line, so a regeneration diff shows flag by flag."""
    head = {k: v for k, v in out.items() if k != "flags"}
    lines = json.dumps(head, indent=1)[:-2] + ',\n "flags": {\n'
    lines += ",\n".join(f"  {json.dumps(k)}: {json.dumps(v, default=str)}" for k, v in out["flags"].items())
    return lines + "\n }\n}\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m grpo_stack.catalog.argparse_extract", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="what", required=True)
    m = sub.add_parser("miles", help="miles train.py (Megatron backend) flags")
    m.add_argument("--miles", type=Path, required=True)
    m.add_argument("--miles-commit", required=True)
    m.add_argument("--megatron", type=Path, required=True)
    m.add_argument("--megatron-commit", required=True)
    m.add_argument("--megatron-note", default="")
    m.add_argument("-o", "--output", type=Path)
    f = sub.add_parser("file", help="flags of one file (plain add_argument calls)")
    f.add_argument("root", type=Path)
    f.add_argument("path")
    args = p.parse_args(argv)
    try:
        return _run(args)
    except (OSError, SyntaxError, UnicodeDecodeError) as exc:
        print(f"argparse_extract: {exc}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    if args.what == "file":
        cat = Catalogue()
        flags, unread = extract_file(args.root, args.path, ClassIndex(args.root, "."))
        cat.add(flags)
        out = {"flags": cat.flags, "unread_definitions": unread}
    else:
        out = build_miles_catalogue(args.miles, args.miles_commit, args.megatron, args.megatron_commit,
                                    args.megatron_note)
    text = dump(out)
    if getattr(args, "output", None):
        args.output.write_text(text, encoding="utf-8")
        print(f"{args.output}: {len(out['flags'])} flags", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
