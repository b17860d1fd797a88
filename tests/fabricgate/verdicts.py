"""The gate's verdict on one published output, judged as the gate judges a probe's report: an nccl-tests log as the
all-reduce across nodes (or on the node, for a one-node run), a DCGM report as one node's diagnostic."""

from __future__ import annotations

import json
from pathlib import Path

from grpo_stack.fabricgate import judge, parse_all_reduce, parse_dcgm
from grpo_stack.fabricgate.floors import floor_for

FIXTURES = Path(__file__).parent / "fixtures"
SOURCES = json.loads((FIXTURES / "SOURCES.json").read_text())


def findings_for(path: Path, instance: str | None = None):
    meta = SOURCES[path.name]
    instance = instance or meta["instance_type"] or "unknown"
    text = path.read_text()
    if path.name.startswith("dcgm"):
        return judge({"node-a": parse_dcgm(text)}, {}, None, instance, None, None, efa=True)
    run = parse_all_reduce(text)
    if (meta["nodes"] or 2) > 1:
        return judge({}, {}, run, instance, floor_for(instance, False), floor_for(instance, True), efa=True)
    return judge({}, {"node-a": run}, None, instance, floor_for(instance, False), None, efa=True)


def verdict(findings) -> str:
    return "fail" if any(f.severity == "error" for f in findings) else "pass"
