"""No module reaches into another's private names: what two modules share has a public name in one of them
(e.g. grpo_stack.lint.steps for the lint modes). Checked over the package and the tests, on the import
statements and on `module._name` attribute reads of imported project modules."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TREES = [ROOT / "tools" / "grpo_stack", ROOT / "tests", ROOT / "bench"]


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _project(module: str | None, level: int) -> bool:
    return level > 0 or (module or "").split(".")[0] in ("grpo_stack", "tests", "bench")


def reaches(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    found, modules = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module != "__future__" and _project(node.module, node.level):
            for alias in node.names:
                if _private(alias.name):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: from {'.' * node.level}"
                                 f"{node.module or ''} import {alias.name}")
                else:
                    modules.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            modules.update((a.asname or a.name).split(".")[0] for a in node.names if _project(a.name, 0))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr) and isinstance(node.value, ast.Name) \
                and node.value.id in modules:
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value.id}.{node.attr}")
    return found


def test_no_module_imports_another_modules_private_names():
    found = [hit for tree in TREES for path in sorted(tree.rglob("*.py")) if "build" not in path.parts
             for hit in reaches(path)]
    assert not found, "\n".join(found)


def test_the_check_sees_a_private_import(tmp_path):
    sample = ROOT / "tests" / "hygiene" / "_sample_for_private_names.py"
    try:
        sample.write_text("from grpo_stack.lint.cache import _secret\nfrom . import helpers\nhelpers._inner()\n")
        assert len(reaches(sample)) == 2
    finally:
        sample.unlink()
