"""AIME 2024: HuggingFaceH4/aime_2024 (id, problem, solution, answer, url, year); 30 problems, evaluation only.

The repository names its one split `train`; here it is the `test` split so it can never be mixed into training
by accident. verl scores data sources starting with `aime` with its DAPO scorer, hence the "Answer:" prompt.
"""

from __future__ import annotations

from .base import MATH_ANSWER_LINE, Adapter, Converted, Skip


def convert(row: dict) -> Converted:
    answer = row["answer"]
    if answer is None or str(answer).strip() == "":
        raise Skip("no answer")
    return Converted(
        problem=row["problem"],
        prompt=MATH_ANSWER_LINE.format(problem=row["problem"]), ground_truth=str(answer).strip(),
        source_id=str(row.get("id", row["_row"])),
    )


ADAPTER = Adapter(
    name="aime", repo="HuggingFaceH4/aime_2024", revision="2fe88a2f1091d5048c0f36abc874fb997b3dd99a",
    data_source="aime2024", ability="math",
    splits={"test": "data/train-*.parquet"},
    convert=convert, columns=("problem", "answer"),
    provenance="unconfirmed by a stored Hub page (none found for HuggingFaceH4/aime_2024). Revision, the file "
    "data/train-00000-of-00001.parquet (30 rows) and the columns id, problem, solution, answer, url, year are "
    "what independent public pins of this commit record, including a resolve URL "
    "https://huggingface.co/datasets/HuggingFaceH4/aime_2024/resolve/2fe88a2f…/data/train-00000-of-00001.parquet",
)
