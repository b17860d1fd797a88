"""A DCGM diagnostic's report (`dcgmi diag -r LEVEL`, as a text table or `-j` JSON): each test's result, the GPUs a
failure names, and the warnings DCGM attached.

The text table is read row by row (`| Memory | Fail - All |`, with `| Warning | GPU 0 ... |` rows under a
result); the JSON is walked for every object with a `status`, named by its nearest `name`, so that DCGM 3's
`test_categories` and DCGM 4's `tests`/`results` layouts read alike."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

ROW = re.compile(r"^\|\s*([^-|].*?|)\s*\|\s*(.*?)\s*\|\s*$")
SECTION = re.compile(r"^[|+]-+\s+(\w[\w ]*?)\s+-+\+")  # `|-----  Deployment  --------+---...|`
STATUS = re.compile(r"^(Pass|Fail|Skip|Warn|Not Run)\b\s*(?:-\s*(.*))?$", re.IGNORECASE)
GPU = re.compile(r"\bGPU\s*(\d+)")
BAD = ("fail", "warn")


@dataclass(frozen=True)
class TestResult:
    name: str
    status: str  # Pass | Fail | Skip | Warn | Not Run (as DCGM spells it)
    detail: str  # which GPUs ("All", "GPU: 0, 1") and DCGM's warnings


@dataclass
class DcgmDiag:
    results: list[TestResult] = field(default_factory=list)

    @property
    def failed(self) -> list[TestResult]:
        return [r for r in self.results if r.status.lower() == "fail"]

    @property
    def warned(self) -> list[TestResult]:
        return [r for r in self.results if r.status.lower() == "warn"]

    def gpus(self, result: TestResult) -> list[int]:
        return sorted({int(g) for g in GPU.findall(result.detail)})


def _from_table(text: str) -> DcgmDiag:
    out = DcgmDiag()
    section = ""
    for raw in text.splitlines():
        line = raw.strip()
        if m := SECTION.match(line):
            section = m.group(1)
            continue
        m = ROW.match(line)
        if not m:
            continue
        name, value = m.groups()
        status = STATUS.match(value)
        if status:
            word = status.group(1)
            if not name and out.results:  # `|   | Fail - GPU: 0 |`: the same test's result for other GPUs
                name = out.results[-1].name
            out.results.append(TestResult(name, "Not Run" if word.lower() == "not run" else word.title(),
                                          status.group(2) or ""))
        elif name.lower() == "error":  # a stage that could not run its tests: `| Error | GPU 3 has ... |`
            out.results.append(TestResult(section or "Error", "Fail", value))
        elif name.lower() in ("warning", "info", "") and out.results and out.results[-1].status.lower() in BAD:
            last = out.results[-1]  # a result's warning rows, and their wrapped lines, follow it
            out.results[-1] = TestResult(last.name, last.status, f"{last.detail} {value}".strip())
    return out


def _walk(node: Any, name: str, out: list[TestResult]) -> None:
    if isinstance(node, dict):
        here = str(node.get("name") or node.get("test_name") or name)
        status = node.get("status")
        if isinstance(status, str) and STATUS.match(status):
            gpu = node.get("gpu_ids", node.get("entity_id", node.get("gpu_id")))
            notes = [f"GPU {gpu}" if gpu not in (None, "") else ""]
            for key in ("warnings", "warning", "info", "errors"):
                value = node.get(key)
                if value:
                    notes.append(json.dumps(value) if not isinstance(value, str) else value)
            out.append(TestResult(here, STATUS.match(status).group(1).title(), " ".join(n for n in notes if n)))
        for value in node.values():
            if isinstance(value, (dict, list)):
                _walk(value, here, out)
    elif isinstance(node, list):
        for item in node:
            _walk(item, name, out)


def parse_dcgm(text: str) -> DcgmDiag:
    stripped = text.strip()
    if stripped.startswith("{"):
        out = DcgmDiag()
        _walk(json.loads(stripped), "", out.results)
        return out
    return _from_table(text)
