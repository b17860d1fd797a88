"""Small copies of each source, written in its real repository layout (paths, columns, nested types), so the
tests read them through `datasets.load_dataset` exactly as the cluster reads the real repositories."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

DAPO_HEAD = ("Solve the following math problem step by step. The last line of your response should be of the form "
             "Answer: $Answer (without quotes) where $Answer is the answer to the problem.\n\n")
DAPO_TAIL = '\n\nRemember to put your answer on its own line after "Answer:".'


def _write(path: Path, rows: list[dict], schema: pa.Schema | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
    return path


def gsm8k(root: Path, train: list[tuple[str, str]], test: list[tuple[str, str]]) -> Path:
    """openai/gsm8k: main/{train,test}-00000-of-00001.parquet; answer is a worked solution ending '#### N'."""
    for split, items in (("train", train), ("test", test)):
        _write(root / "main" / f"{split}-00000-of-00001.parquet",
               [{"question": q, "answer": f"Work it out.\n#### {a}"} for q, a in items])
    return root


def math_lighteval(root: Path, train: list[tuple[str, str]], test: list[tuple[str, str]]) -> Path:
    """DigitalLearningGmbH/MATH-lighteval: data/{train,test}-00000-of-00001.parquet (problem, level, type, solution)."""
    for split, items in (("train", train), ("test", test)):
        _write(root / "data" / f"{split}-00000-of-00001.parquet",
               [{"problem": p, "level": "Level 3", "type": "Algebra",
                 "solution": f"So we get $\\boxed{{{a}}}$." if a is not None else "No boxed answer."}
                for p, a in items])
    return root


def dapo(root: Path, items: list[tuple[str, str]], repeat: int = 1) -> Path:
    """BytedTsinghua-SIA/DAPO-Math-17k: data/dapo-math-17k.parquet, already verl-shaped, problems repeated."""
    rows = []
    for _ in range(repeat):
        for i, (p, a) in enumerate(items):
            rows.append({
                "data_source": "math_dapo",
                "prompt": [{"content": DAPO_HEAD + p + DAPO_TAIL, "role": "user"}],
                "ability": "MATH",
                "reward_model": {"ground_truth": a, "style": "rule-lighteval/MATH_v2"},
                "extra_info": {"index": f"uuid-{i}"},
            })
    return _write(root / "data" / "dapo-math-17k.parquet", rows).parent.parent


def aime(root: Path, items: list[tuple[str, int]]) -> Path:
    """HuggingFaceH4/aime_2024: data/train-00000-of-00001.parquet (id, problem, solution, answer, url, year)."""
    _write(root / "data" / "train-00000-of-00001.parquet",
           [{"id": 60 + i, "problem": p, "solution": "...", "answer": str(a),
             "url": f"https://artofproblemsolving.com/wiki/{i}", "year": "2024"} for i, (p, a) in enumerate(items)])
    return root


def _apps_row(i: int, question: str, io: dict | None, starter: str = "") -> dict:
    return {"id": i, "question": question, "solutions": json.dumps(["print(input())"]),
            "input_output": json.dumps(io) if io is not None else "", "difficulty": "interview",
            "url": f"https://codeforces.com/problemset/problem/{i}", "starter_code": starter}


def apps(root: Path, train: list[tuple[str, dict | None]], test: list[tuple[str, dict | None]]) -> Path:
    """codeparrot/apps at main: train.jsonl and test.jsonl at the root beside apps.py, one JSON object a line,
    key `id` (the script renamed it problem_id); solutions and input_output are JSON strings."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "apps.py").write_text("# the loading script current datasets releases refuse to run\n")
    for split, items in (("train", train), ("test", test)):
        with (root / f"{split}.jsonl").open("w") as f:
            for i, (q, io) in enumerate(items):
                f.write(json.dumps(_apps_row(i, q, io)) + "\n")
    return root


TACO_COLUMNS = ("question", "solutions", "starter_code", "input_output", "difficulty", "raw_tags", "name", "source",
                "tags", "skill_types", "url", "Expected Auxiliary Space", "time_limit", "date", "picture_num",
                "memory_limit", "Expected Time Complexity")
TACO_SCHEMA = pa.schema([(c, pa.string()) for c in TACO_COLUMNS])  # the card declares every feature a string


def taco(root: Path, train: list[tuple[str, dict | None]], test: list[tuple[str, dict | None]]) -> Path:
    """BAAI/TACO at its parquet commit: ALL/train-NNNNN-of-00009.parquet, ALL/test-00000-of-00001.parquet."""
    for name, items in (("train-00000-of-00009", train), ("test-00000-of-00001", test)):
        rows = []
        for i, (q, io) in enumerate(items):
            row = _apps_row(i, q, io)
            row.pop("id")
            row.update({"raw_tags": "['math']", "name": f"p{i}", "source": "codeforces", "tags": "['Math']",
                        "skill_types": "[]", "Expected Auxiliary Space": None, "time_limit": "1 second",
                        "date": "2020-01-01", "picture_num": "0", "memory_limit": "256 megabytes",
                        "Expected Time Complexity": None, "difficulty": "EASY"})
            rows.append(row)
        _write(root / "ALL" / f"{name}.parquet", rows, TACO_SCHEMA)
    return root


TESTS = pa.struct([("input", pa.list_(pa.string())), ("output", pa.list_(pa.string()))])
CC_SCHEMA = pa.schema([
    ("name", pa.string()), ("description", pa.string()), ("public_tests", TESTS), ("private_tests", TESTS),
    ("generated_tests", TESTS), ("source", pa.int64()), ("difficulty", pa.int64()),
    ("solutions", pa.struct([("language", pa.list_(pa.int64())), ("solution", pa.list_(pa.string()))])),
    ("cf_contest_id", pa.int64()), ("cf_index", pa.string()), ("cf_points", pa.float32()), ("cf_rating", pa.int32()),
    ("cf_tags", pa.list_(pa.string())), ("is_description_translated", pa.bool_()),
    ("untranslated_description", pa.string()),
    ("time_limit", pa.struct([("seconds", pa.int64()), ("nanos", pa.int64())])),
    ("memory_limit_bytes", pa.int64()), ("input_file", pa.string()), ("output_file", pa.string()),
])


# valid and test are the real shard hashes; train has 39 shards whose names were not read, so a stand-in.
CC_SHARD_HASH = {"train": "0123456789abcdef", "valid": "5e672c5751f060d3", "test": "9c49eeff30aacaa8"}


def codecontests(root: Path, splits: dict[str, list[tuple[str, list[tuple[str, str]]]]]) -> Path:
    """deepmind/code_contests: data/<split>-NNNNN-of-NNNNN-<hash>.parquet, tests as {input, output} structs."""
    for split, items in splits.items():
        rows = []
        for i, (desc, cases) in enumerate(items):
            pub = cases[:1]
            priv = cases[1:]
            rows.append({
                "name": f"{split}-{i}", "description": desc,
                "public_tests": {"input": [c[0] for c in pub], "output": [c[1] for c in pub]},
                "private_tests": {"input": [c[0] for c in priv], "output": [c[1] for c in priv]},
                "generated_tests": {"input": ["9\n"], "output": ["9\n"]}, "source": 2, "difficulty": 7,
                "solutions": {"language": [3], "solution": ["print(input())"]}, "cf_contest_id": 1,
                "cf_index": "A", "cf_points": 500.0, "cf_rating": 800, "cf_tags": ["math"],
                "is_description_translated": False, "untranslated_description": "",
                "time_limit": {"seconds": 2, "nanos": 0}, "memory_limit_bytes": 256000000,
                "input_file": "", "output_file": "",
            })
        # Shard names carry a content hash, as at the pinned commit (data/valid-00000-of-00001-5e672c5751f060d3...).
        _write(root / "data" / f"{split}-00000-of-00001-{CC_SHARD_HASH[split]}.parquet", rows, CC_SCHEMA)
    return root
