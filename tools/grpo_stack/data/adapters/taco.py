"""TACO: BAAI/TACO. Converted from its loading script to parquet in the repository itself (config `ALL`:
ALL/train-NNNNN-of-00009.parquet, ALL/test-00000-of-00001.parquet). Columns, all strings: question, solutions,
starter_code, input_output (JSON), difficulty, raw_tags, name, source, tags, skill_types, url,
Expected Auxiliary Space, time_limit, date, picture_num, memory_limit, Expected Time Complexity."""

from __future__ import annotations

from .base import Adapter, Converted, apps_style_cases, code_prompt


def convert(row: dict) -> Converted:
    cases, fn_name = apps_style_cases(row["input_output"])
    meta = {k: row[k] for k in ("difficulty", "source", "name") if row.get(k)}
    return Converted(
        problem=row["question"],
        prompt=code_prompt(row["question"], fn_name, row.get("starter_code")), ground_truth=cases,
        source_id=str(row["_row"]), metadata=meta,
    )


ADAPTER = Adapter(
    name="taco", repo="BAAI/TACO", revision="d593ed0a2becbbc952230bb89be09189bf1056dc",
    data_source="taco", ability="code",
    splits={"train": "ALL/train-*.parquet", "test": "ALL/test-*.parquet"},
    convert=convert, columns=("question", "input_output"),
    provenance="config ALL with data_files ALL/train-* and ALL/test-*, 17 string columns, 25,443 train / 1,000 "
    "test: confirmed from the parquet conversion commit's card "
    "https://huggingface.co/datasets/BAAI/TACO/blob/1257571d3ae21509282a69a0e34d85cb6d85b594/README.md "
    "(\"Convert dataset to Parquet (#2)\") and from d593ed0, a later commit to README.md on main "
    "(\"Update README.md\", same configs, "
    "with the test-set fix note) at https://shuiyin.accos.tk/datasets/BAAI/TACO/blob/main/README.md?code=true "
    "(a Hub mirror page; 7-hex prefix, the full hash from public pins). Shard names "
    "ALL/train-0000N-of-00009.parquet and ALL/test-00000-of-00001.parquet: from public pins of d593ed0",
)
