"""DAPO-Math-17k: BytedTsinghua-SIA/DAPO-Math-17k, already in verl's layout (data_source math_dapo, prompt chat
list with the "Answer:" instruction, ability, reward_model {ground_truth, style}, extra_info {index}). Its one
parquet file, data/dapo-math-17k.parquet, repeats each problem many times (1.79 M rows for about 17 k problems);
the preparation de-duplicates by problem unless told not to. See `provenance` for what was confirmed."""

from __future__ import annotations

from .base import MATH_ANSWER_LINE, Adapter, Converted, Skip

_HEAD, _TAIL = MATH_ANSWER_LINE.split("{problem}")


def convert(row: dict) -> Converted:
    prompt = row["prompt"]
    if not isinstance(prompt, list) or not prompt:
        raise Skip("prompt is not a chat list")
    text = prompt[-1]["content"]
    problem = text.removeprefix(_HEAD).removesuffix(_TAIL)
    truth = (row["reward_model"] or {}).get("ground_truth")
    if truth in (None, ""):
        raise Skip("no ground_truth")
    extra = row.get("extra_info") or {}
    return Converted(
        problem=problem, prompt=text, ground_truth=str(truth),
        source_id=str(extra.get("index", row["_row"])),
    )


ADAPTER = Adapter(
    name="dapo-math-17k", repo="BytedTsinghua-SIA/DAPO-Math-17k", revision="65877096c24ffa7abc4e4fa5edb95cf3413a5674",
    data_source="math_dapo", ability="math",
    splits={"train": "data/dapo-math-17k.parquet"},
    convert=convert, columns=("prompt", "reward_model"),
    provenance="unconfirmed by a stored Hub page (the pages searched hold no DAPO-Math-17k card or tree). "
    "Revision, the one file data/dapo-math-17k.parquet (299,363,855 bytes, 1,791,700 rows, split train) and "
    "the verl-shaped columns data_source, prompt, ability, reward_model, extra_info are what independent "
    "public pins of this commit record (HF cache paths .../snapshots/65877096…/data/dapo-math-17k.parquet)",
)
