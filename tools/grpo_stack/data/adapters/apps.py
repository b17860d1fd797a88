"""APPS: codeparrot/apps. The repository is a loading script (apps.py, which current `datasets` no longer runs)
reading two JSON-lines files at its root, train.jsonl and test.jsonl; those files are read here directly at a
pinned commit of main. Each line holds id, question, solutions (JSON string), input_output (JSON string),
difficulty, url, starter_code; the script only renamed `id` to problem_id. The Hub's parquet conversion lives
on the moving branch refs/convert/parquet, so it is not the default."""

from __future__ import annotations

from .base import Adapter, Converted, apps_style_cases, code_prompt


def convert(row: dict) -> Converted:
    cases, fn_name = apps_style_cases(row["input_output"])
    return Converted(
        problem=row["question"],
        prompt=code_prompt(row["question"], fn_name, row.get("starter_code")), ground_truth=cases,
        source_id=str(row["id"] if row.get("id") is not None else row["_row"]),
        metadata={"difficulty": row["difficulty"]} if row.get("difficulty") else {},
    )


ADAPTER = Adapter(
    name="apps", repo="codeparrot/apps", revision="21e74ddf8de1a21436da12e3e653065c5213e9d1",
    data_source="apps", ability="code",
    splits={"train": "train.jsonl", "test": "test.jsonl"},
    convert=convert, columns=("question", "input_output"),
    provenance="21e74dd as the latest commit to README.md on main (\"update metadata\"), the 7 columns and "
    "5,000 train / 5,000 test: confirmed "
    "from https://huggingface.co/datasets/codeparrot/apps/blob/main/README.md (7-hex prefix; the full hash is "
    "from public pins of main). Files train.jsonl (107,101,272 bytes) and test.jsonl (1,292,436,853 bytes) "
    "beside apps.py at this commit, with the key `id` where the script renamed it problem_id: from public "
    "pins that listed and hashed them; no stored Hub tree page. The parquet form exists only on the branch "
    "refs/convert/parquet (all/{train,test}/NNNN.parquet), whose commit no stored page names",
)
