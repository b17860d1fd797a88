"""MATH (Hendrycks) in its parquet form DigitalLearningGmbH/MATH-lighteval: problem, level, type, solution.

The answer is the last \\boxed{} of the solution, as verl's own MATH preprocessing does; verl scores the
data_source DigitalLearningGmbH/MATH-lighteval with its MATH scorer.
"""

from __future__ import annotations

from ..example import Example
from .base import MATH_BOXED, Adapter, Skip, boxed


def convert(row: dict, split: str) -> Example:
    truth = boxed(row["solution"] or "")
    if truth is None:
        raise Skip("solution has no \\boxed answer")
    return Example(
        data_source="DigitalLearningGmbH/MATH-lighteval", ability="math", problem=row["problem"],
        prompt=MATH_BOXED.format(problem=row["problem"]), ground_truth=truth, source="math",
        source_id=str(row["_row"]), split=split,
        metadata={k: row[k] for k in ("level", "type") if row.get(k) is not None},
    )


ADAPTER = Adapter(
    name="math", repo="DigitalLearningGmbH/MATH-lighteval", revision="0530c78699ea5e8eb5530600900e1f328b48acad",
    data_source="DigitalLearningGmbH/MATH-lighteval", ability="math",
    splits={"train": "data/train-*.parquet", "test": "data/test-*.parquet"},
    convert=convert, columns=("problem", "solution"),
    provenance="revision read from a public dataset-lineage record of MATH-lighteval (train and test)",
)
