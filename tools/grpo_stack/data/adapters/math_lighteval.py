"""MATH (Hendrycks) in its parquet form DigitalLearningGmbH/MATH-lighteval, config `default`: problem, level,
solution, type (all strings). The per-subject configs (algebra, geometry, ...) are subsets of `default`.

The answer is the last \\boxed{} of the solution, as verl's own MATH preprocessing does; verl scores the
data_source DigitalLearningGmbH/MATH-lighteval with its MATH scorer.
"""

from __future__ import annotations

from .base import MATH_BOXED, Adapter, Converted, Skip, boxed


def convert(row: dict) -> Converted:
    truth = boxed(row["solution"] or "")
    if truth is None:
        raise Skip("solution has no \\boxed answer")
    return Converted(
        problem=row["problem"],
        prompt=MATH_BOXED.format(problem=row["problem"]), ground_truth=truth,
        source_id=str(row["_row"]),
        metadata={k: row[k] for k in ("level", "type") if row.get(k) is not None},
    )


ADAPTER = Adapter(
    name="math", repo="DigitalLearningGmbH/MATH-lighteval", revision="0530c78699ea5e8eb5530600900e1f328b48acad",
    data_source="DigitalLearningGmbH/MATH-lighteval", ability="math",
    splits={"train": "data/train-*.parquet", "test": "data/test-*.parquet"},
    convert=convert, columns=("problem", "solution"),
    provenance="commit 0530c78 as the latest commit to README.md on main (\"Update README.md\"), config "
    "`default` with columns problem, "
    "level, solution, type (all strings), 7,500 train / 5,000 test: confirmed from "
    "https://hf-proxy.robus.us.kg/datasets/DigitalLearningGmbH/MATH-lighteval/blob/main/README.md (a Hub mirror "
    "page; it shows the 7-hex prefix, the full hash is from public pins). File "
    "data/train-00000-of-00001.parquet: from a public resolve URL at this commit; the test file name is "
    "unconfirmed (data/test-* by the same convention)",
)
