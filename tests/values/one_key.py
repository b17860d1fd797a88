"""One values key set over a shipped run file, read the two ways a user meets it: grpo-lint given the key in a file
of its own (`--base` the shipped file), and Helm's own engine rendering the shipped values with the key set."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from grpo_stack.cli.lint import main
from grpo_stack.render import render

SHIPPED = "qwen3-8b.yaml"


def lint_over_shipped(tmp_path: Path, capsys, repo_root: Path, key: str, value: Any) -> tuple[int, str, Path]:
    """(grpo-lint's exit code, its output, the override file): the key written nested, one level per line, so its
    line is the number of its parts and its column twice its depth plus one."""
    parts = key.split(".")
    lines = [f"{'  ' * depth}{part}:" for depth, part in enumerate(parts[:-1])]
    lines.append(f"{'  ' * (len(parts) - 1)}{parts[-1]}: {value}")
    values = tmp_path / "v.yaml"
    values.write_text("\n".join(lines) + "\n")
    code = main(["--no-cache", "--base", str(repo_root / "values" / SHIPPED), str(values)])
    return code, capsys.readouterr().out, values


def render_over_shipped(repo_root: Path, key: str, value: Any):
    """Helm's render of the shipped values with `key` set to `value` (RenderError where Helm refuses it)."""
    values = yaml.safe_load((repo_root / "values" / SHIPPED).read_text())
    node = values
    *parents, last = key.split(".")
    for part in parents:
        node = node.setdefault(part, {})
    node[last] = value
    return render(values)
