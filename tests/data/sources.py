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
    return {"problem_id": i, "question": question, "solutions": json.dumps(["print(input())"]),
            "input_output": json.dumps(io) if io is not None else "", "difficulty": "interview",
            "url": f"https://codeforces.com/problemset/problem/{i}", "starter_code": starter}


def apps(root: Path, train: list[tuple[str, dict | None]], test: list[tuple[str, dict | None]],
         config: str = "all") -> Path:
    """codeparrot/apps on refs/convert/parquet: all/{train,test}/NNNN.parquet; input_output is a JSON string."""
    for split, items in (("train", train), ("test", test)):
        _write(root / config / split / "0000.parquet", [_apps_row(i, q, io) for i, (q, io) in enumerate(items)])
    return root


def taco(root: Path, train: list[tuple[str, dict | None]], test: list[tuple[str, dict | None]]) -> Path:
    """BAAI/TACO on refs/convert/parquet: ALL/{train,test}/NNNN.parquet with TACO's extra columns."""
    for split, items in (("train", train), ("test", test)):
        rows = []
        for i, (q, io) in enumerate(items):
            row = _apps_row(i, q, io)
            row.pop("problem_id")
            row.update({"raw_tags": "['math']", "name": f"p{i}", "source": "codeforces", "tags": "['Math']",
                        "skill_types": "[]", "Expected Auxiliary Space": None, "time_limit": "1 second",
                        "date": "2020-01-01", "picture_num": "0", "memory_limit": "256 megabytes",
                        "Expected Time Complexity": None, "difficulty": "EASY"})
            rows.append(row)
        _write(root / "ALL" / split / "0000.parquet", rows)
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


def codecontests(root: Path, splits: dict[str, list[tuple[str, list[tuple[str, str]]]]]) -> Path:
    """deepmind/code_contests: data/<split>-NNNNN-of-NNNNN.parquet, tests as {input: [...], output: [...]} structs."""
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
        _write(root / "data" / f"{split}-00000-of-00001.parquet", rows, CC_SCHEMA)
    return root
