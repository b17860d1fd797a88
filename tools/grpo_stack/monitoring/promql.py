"""Prometheus's own code over the chart's queries and rules: promtool and promql-metrics (toolset "promtool",
built by `grpo-cluster build --toolset promtool`)."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..localcluster import binaries

TOOLSET = binaries.PROMTOOL.name


class ToolsMissing(RuntimeError):
    pass


def tools_dir() -> Path:
    """The built toolset, or ToolsMissing naming the command that builds it."""
    try:
        ready, where = binaries.verified(name=TOOLSET), binaries.tools_dir(TOOLSET)
    except binaries.BuildError as exc:
        raise ToolsMissing(str(exc)) from exc
    if not ready:
        raise ToolsMissing(f"promtool is not built at {where}: run `grpo-cluster build --toolset {TOOLSET}` "
                           "(make cluster-tools)")
    return where


@dataclass(frozen=True)
class Parsed:
    expr: str
    error: str
    metrics: tuple[str, ...]


def parse(exprs: list[str], directory: Path | None = None) -> list[Parsed]:
    """Each expression through promql/parser.ParseExpr: its error, or the metric names its selectors name."""
    tool = (directory or tools_dir()) / "promql-metrics"
    proc = subprocess.run([str(tool)], input=json.dumps(exprs), capture_output=True, text=True, check=True,
                          timeout=60)
    return [Parsed(r["expr"], r.get("error", ""), tuple(r["metrics"])) for r in json.loads(proc.stdout)]


def promtool(*args: str, directory: Path | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """`promtool ARGS`; the caller reads returncode, stdout and stderr."""
    return subprocess.run([str((directory or tools_dir()) / "promtool"), *args], capture_output=True, text=True,
                          check=False, timeout=120, cwd=cwd)
