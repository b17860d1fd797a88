"""GSM8K: openai/gsm8k, config `main` (question, answer ending in `#### <number>`); verl scores it as openai/gsm8k.

Layout at the pinned commit: main/train-00000-of-00001.parquet, main/test-00000-of-00001.parquet (the
`socratic` config sits beside it in socratic/). See `provenance` for what was confirmed where.
"""

from __future__ import annotations

from .base import Adapter, Converted, Skip

INSTRUCTION = "{problem} Let's think step by step and output the final answer after \"####\"."


def convert(row: dict) -> Converted:
    answer = row["answer"]
    if "####" not in answer:
        raise Skip("answer has no ####")
    truth = answer.split("####")[-1].strip().replace(",", "")
    return Converted(
        problem=row["question"],
        prompt=INSTRUCTION.format(problem=row["question"]), ground_truth=truth,
        source_id=str(row["_row"]),
    )


ADAPTER = Adapter(
    name="gsm8k", repo="openai/gsm8k", revision="740312add88f781978c0658806c59bc2815b9866",
    data_source="openai/gsm8k", ability="math",
    splits={"train": "main/train-*.parquet", "test": "main/test-*.parquet"},
    convert=convert, columns=("question", "answer"),
    provenance="config `main`, columns question/answer (strings), 7,473 train / 1,319 test: confirmed from the "
    "dataset card https://huggingface.co/datasets/openai/gsm8k/resolve/refs%2Fpr%2F7/README.md. Revision and "
    "files main/{train,test}-00000-of-00001.parquet: unconfirmed by a stored Hub page (none names a commit); "
    "taken from public pins that download this commit's main/test-00000-of-00001.parquet",
)
