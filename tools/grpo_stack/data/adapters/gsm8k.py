"""GSM8K: openai/gsm8k, config `main` (question, answer ending in `#### <number>`); verl scores it as openai/gsm8k."""

from __future__ import annotations

from ..example import Example
from .base import Adapter, Skip

INSTRUCTION = "{problem} Let's think step by step and output the final answer after \"####\"."


def convert(row: dict, split: str) -> Example:
    answer = row["answer"]
    if "####" not in answer:
        raise Skip("answer has no ####")
    truth = answer.split("####")[-1].strip().replace(",", "")
    return Example(
        data_source="openai/gsm8k", ability="math", problem=row["question"],
        prompt=INSTRUCTION.format(problem=row["question"]), ground_truth=truth, source="gsm8k",
        source_id=str(row["_row"]), split=split,
    )


ADAPTER = Adapter(
    name="gsm8k", repo="openai/gsm8k", revision="740312add88f781978c0658806c59bc2815b9866",
    data_source="openai/gsm8k", ability="math",
    splits={"train": "main/train-*.parquet", "test": "main/test-*.parquet"},
    convert=convert, columns=("question", "answer"),
    provenance="revision: `main` of openai/gsm8k as pinned by several public loaders (7,473 train / 1,319 test)",
)
