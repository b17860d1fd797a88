"""TACO: BAAI/TACO. Like APPS, a loading-script repository; its parquet form is refs/convert/parquet, config
`ALL`. Columns include question, solutions, starter_code, input_output (JSON), difficulty, source, name."""

from __future__ import annotations

from ..example import Example
from .base import Adapter, apps_style_cases, code_prompt


def convert(row: dict, split: str) -> Example:
    cases, fn_name = apps_style_cases(row["input_output"])
    meta = {k: row[k] for k in ("difficulty", "source", "name") if row.get(k)}
    return Example(
        data_source="taco", ability="code", problem=row["question"],
        prompt=code_prompt(row["question"], fn_name, row.get("starter_code")), ground_truth=cases, source="taco",
        source_id=str(row["_row"]), split=split, metadata=meta,
    )


ADAPTER = Adapter(
    name="taco", repo="BAAI/TACO", revision="refs/convert/parquet",
    data_source="taco", ability="code",
    splits={"train": "ALL/train/*.parquet", "test": "ALL/test/*.parquet"},
    convert=convert, columns=("question", "input_output"),
    provenance="columns from the TACO README (25,443 train / 1,000 test); the conversion branch and its `ALL` "
    "directory were not read from the Hub here, so pin the commit with --revision taco=<sha> and check the layout",
)
