"""CodeContests: deepmind/code_contests, parquet in the repository: data/<split>-NNNNN-of-NNNNN-<hash>.parquet
(the shard names carry a content hash, so the globs are data/<split>-*.parquet). Test cases are struct columns
public_tests / private_tests / generated_tests, each {input: [...], output: [...]}; the prepared ground truth
uses the public and private tests (the generated ones are many and mutation-made)."""

from __future__ import annotations

from .base import Adapter, Converted, code_prompt, test_cases


def _tests(row: dict, key: str) -> tuple[list, list]:
    t = row.get(key) or {}
    return list(t.get("input") or []), list(t.get("output") or [])


def convert(row: dict) -> Converted:
    pub_in, pub_out = _tests(row, "public_tests")
    priv_in, priv_out = _tests(row, "private_tests")
    cases = test_cases(pub_in + priv_in, pub_out + priv_out)
    meta = {k: row[k] for k in ("difficulty", "cf_rating", "source") if row.get(k) is not None}
    return Converted(
        problem=row["description"],
        prompt=code_prompt(row["description"], None, None), ground_truth=cases,
        source_id=str(row.get("name") or row["_row"]), metadata=meta,
    )


ADAPTER = Adapter(
    name="codecontests", repo="deepmind/code_contests", revision="802411c3010cb00d1b05bad57ca77365a3c699d6",
    data_source="codecontests", ability="code",
    splits={"train": "data/train-*.parquet", "valid": "data/valid-*.parquet", "test": "data/test-*.parquet"},
    convert=convert, columns=("description", "public_tests", "private_tests"),
    provenance="unconfirmed by a stored Hub page (none found). Revision and layout from public pins that read "
    "this commit's Hub metadata: 41 parquet files named data/<split>-NNNNN-of-NNNNN-<hash>.parquet, e.g. "
    "data/valid-00000-of-00001-5e672c5751f060d3.parquet and data/test-00000-of-00001-9c49eeff30aacaa8.parquet; "
    "13,328 train / 117 valid / 165 test; cards cited there: "
    "https://huggingface.co/datasets/deepmind/code_contests/blob/802411c3010cb00d1b05bad57ca77365a3c699d6/README.md",
)
