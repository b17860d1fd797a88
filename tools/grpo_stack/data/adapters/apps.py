"""APPS: codeparrot/apps. The repository is a loading script (which current `datasets` no longer runs); its
parquet form is the Hub's conversion branch refs/convert/parquet, config `all` (the per-difficulty configs are
subsets of it). Columns: problem_id, question, solutions, input_output (JSON), difficulty, url, starter_code."""

from __future__ import annotations

from ..example import Example
from .base import Adapter, apps_style_cases, code_prompt


def convert(row: dict, split: str) -> Example:
    cases, fn_name = apps_style_cases(row["input_output"])
    return Example(
        data_source="apps", ability="code", problem=row["question"],
        prompt=code_prompt(row["question"], fn_name, row.get("starter_code")), ground_truth=cases, source="apps",
        source_id=str(row.get("problem_id", row["_row"])), split=split,
        metadata={"difficulty": row["difficulty"]} if row.get("difficulty") else {},
    )


ADAPTER = Adapter(
    name="apps", repo="codeparrot/apps", revision="refs/convert/parquet",
    data_source="apps", ability="code",
    splits={"train": "all/train/*.parquet", "test": "all/test/*.parquet"},
    convert=convert, columns=("question", "input_output"),
    provenance="layout all/{train,test}/NNNN.parquet on refs/convert/parquet, from public loaders; the branch "
    "moves when the Hub re-converts, so a run pins its commit with --revision apps=<sha>",
)
