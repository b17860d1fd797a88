"""grpo-data prepare: every adapter reads its source's real layout through `datasets`; the verl parquet and the
miles JSONL carry the same facts field by field; mixing is reproducible by seed; difficulty filtering."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
from grpo_stack.data.adapters import REGISTRY

from . import sources

MATH_Q = [("What is 1+1?", "2"), ("What is 2+3?", "5"), ("Compute 7*6.", "42")]


def _verl(path):
    return pq.read_table(path).to_pylist()


def _miles(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def _prepare(run, tmp_path, name, src, *extra, outputs=("train.parquet", "train.jsonl")):
    outs = []
    for o in outputs:
        outs += ["--output", str(tmp_path / "out" / o)]
    code, out, err = run("prepare", "--dataset", name, "--source-dir", f"{name.split(':')[0]}={src}", *outs, *extra)
    assert code == 0, err
    return [tmp_path / "out" / o for o in outputs]


def test_gsm8k_rows_field_by_field(run, tmp_path):
    """The verl row verl's RLHFDataset and gsm8k scorer read, and the miles row with the same label."""
    src = sources.gsm8k(tmp_path / "gsm8k", [("Tom has 1,200 apples. How many?", "1,200")], [("x", "1")])
    pq_path, jl_path = _prepare(run, tmp_path, "gsm8k", src, "--allow-mutable")
    (row,) = _verl(pq_path)
    assert row["data_source"] == "openai/gsm8k"
    assert row["ability"] == "math"
    assert row["prompt"] == [{"role": "user", "content":
                              "Tom has 1,200 apples. How many? Let's think step by step and output the final "
                              "answer after \"####\"."}]
    assert row["reward_model"] == {"style": "rule", "ground_truth": "1200"}
    assert row["extra_info"]["problem"] == "Tom has 1,200 apples. How many?"
    assert row["extra_info"]["split"] == "train" and row["extra_info"]["index"] == 0
    (line,) = _miles(jl_path)
    assert line["prompt"] == row["prompt"]
    assert line["label"] == "1200"
    assert line["metadata"]["data_source"] == "openai/gsm8k"
    assert line["metadata"]["problem"] == row["extra_info"]["problem"]


def test_math_takes_last_boxed_answer_and_skips_unboxed(run, tmp_path):
    src = sources.math_lighteval(tmp_path / "m", [("Find x.", "\\frac{1}{2}"), ("No answer here", None)],
                                 [("t", "1")])
    pq_path, _ = _prepare(run, tmp_path, "math", src)
    rows = _verl(pq_path)
    assert [r["reward_model"]["ground_truth"] for r in rows] == ["\\frac{1}{2}"]
    assert rows[0]["data_source"] == "DigitalLearningGmbH/MATH-lighteval"
    assert json.loads(rows[0]["extra_info"]["metadata"]) == {"level": "Level 3", "type": "Algebra"}
    manifest = json.loads((tmp_path / "out" / "train.parquet.manifest.json").read_text())
    assert manifest["sources"][0]["skipped"] == {"solution has no \\boxed answer": 1}


def test_dapo_is_deduplicated_and_keeps_its_prompt(run, tmp_path):
    """DAPO-Math-17k repeats every problem; one copy each is kept unless --keep-duplicates."""
    src = sources.dapo(tmp_path / "dapo", MATH_Q, repeat=4)
    pq_path, _ = _prepare(run, tmp_path, "dapo-math-17k", src)
    rows = _verl(pq_path)
    assert len(rows) == 3
    assert {r["extra_info"]["problem"] for r in rows} == {q for q, _ in MATH_Q}
    assert all(r["data_source"] == "math_dapo" for r in rows)
    assert all(r["prompt"][0]["content"] == sources.DAPO_HEAD + r["extra_info"]["problem"] + sources.DAPO_TAIL
               for r in rows)
    manifest = json.loads((tmp_path / "out" / "train.parquet.manifest.json").read_text())
    assert manifest["sources"][0]["duplicates"] == 9
    pq_path, _ = _prepare(run, tmp_path, "dapo-math-17k", src, "--keep-duplicates")
    assert len(_verl(pq_path)) == 12


def test_aime_is_evaluation_only(run, tmp_path):
    src = sources.aime(tmp_path / "aime", [("Find the remainder.", 204)])
    code, _, err = run("prepare", "--dataset", "aime", "--source-dir", f"aime={src}",
                       "--output", str(tmp_path / "o.parquet"))
    assert code == 2 and "aime: no 'train' split (has: test)" in err
    pq_path, _ = _prepare(run, tmp_path, "aime", src, "--split", "test")
    (row,) = _verl(pq_path)
    assert row["data_source"] == "aime2024" and row["reward_model"]["ground_truth"] == "204"


@pytest.mark.parametrize("name, writer", [("apps", sources.apps), ("taco", sources.taco)])
def test_apps_style_code_sets_carry_test_cases(run, tmp_path, name, writer):
    """verl's sandbox scorer reads ground_truth as JSON {inputs, outputs[, fn_name]}; rows without tests skip."""
    io = {"inputs": ["1 2\n"], "outputs": ["3\n"]}
    fn = {"inputs": [[1, 2]], "outputs": [3], "fn_name": "add"}
    src = writer(tmp_path / name, [("Sum two numbers.", io), ("Call add.", fn), ("No tests.", None)], [("t", io)])
    pq_path, jl_path = _prepare(run, tmp_path, name, src, "--revision", f"{name}={'a' * 40}")
    rows = sorted(_verl(pq_path), key=lambda r: r["extra_info"]["problem"])
    assert [r["extra_info"]["problem"] for r in rows] == ["Call add.", "Sum two numbers."]
    assert all(r["data_source"] == name and r["ability"] == "code" for r in rows)
    assert json.loads(rows[0]["reward_model"]["ground_truth"]) == fn
    assert "`add`" in rows[0]["prompt"][0]["content"]
    assert json.loads(rows[1]["reward_model"]["ground_truth"]) == io
    labels = sorted(json.loads(line["label"])["inputs"][0] == "1 2\n" for line in _miles(jl_path))
    assert labels == [False, True]
    manifest = json.loads((tmp_path / "out" / "train.parquet.manifest.json").read_text())
    assert manifest["sources"][0]["revision"] == "a" * 40 and manifest["sources"][0]["mutable"] is False
    assert manifest["sources"][0]["skipped"] == {"empty input_output": 1}


def test_codecontests_public_and_private_tests(run, tmp_path):
    src = sources.codecontests(tmp_path / "cc", {
        "train": [("Echo.", [("1\n", "1\n"), ("2\n", "2\n")]), ("Nothing.", [])],
        "valid": [("v", [("3\n", "3\n")])], "test": [("t", [("4\n", "4\n")])],
    })
    pq_path, _ = _prepare(run, tmp_path, "codecontests", src)
    (row,) = _verl(pq_path)
    assert row["data_source"] == "codecontests"
    assert json.loads(row["reward_model"]["ground_truth"]) == {"inputs": ["1\n", "2\n"], "outputs": ["1\n", "2\n"]}


def test_branch_revision_needs_a_pin_or_allow_mutable(run, tmp_path):
    """A branch (APPS' parquet conversion branch refs/convert/parquet moves whenever the Hub re-converts) is never
    used silently: refused with the fix named, or recorded as mutable."""
    src = sources.apps(tmp_path / "apps", [("q", {"inputs": ["1"], "outputs": ["1"]})], [])
    branch = ("--revision", "apps=refs/convert/parquet")
    code, _, err = run("prepare", "--dataset", "apps", "--source-dir", f"apps={src}", *branch,
                       "--output", str(tmp_path / "o.parquet"))
    assert code == 2
    assert err.count("\n") == 1 and "pin it with --revision apps=<40-hex commit>" in err
    pq_path, _ = _prepare(run, tmp_path, "apps", src, *branch, "--allow-mutable")
    manifest = json.loads((tmp_path / "out" / "train.parquet.manifest.json").read_text())
    assert manifest["sources"][0]["revision"] == "refs/convert/parquet"
    assert manifest["sources"][0]["mutable"] is True


def _mix(run, tmp_path, tag, seed, gsm, mth):
    out = tmp_path / tag / "mix.parquet"
    code, _, err = run("prepare", "--dataset", "gsm8k:2", "--dataset", "math:0.5", "--seed", str(seed),
                       "--source-dir", f"gsm8k={gsm}", "--source-dir", f"math={mth}", "--output", str(out))
    assert code == 0, err
    return out


def test_weighted_mix_is_reproducible_by_seed(run, tmp_path):
    """Weight 2 = two copies; weight 0.5 = half, drawn by the seed; the same seed gives the same bytes."""
    gsm = sources.gsm8k(tmp_path / "g", [(f"g{i}?", str(i)) for i in range(5)], [("t", "0")])
    mth = sources.math_lighteval(tmp_path / "m", [(f"m{i}?", str(i)) for i in range(10)], [("t", "0")])
    a = _mix(run, tmp_path, "a", 7, gsm, mth)
    b = _mix(run, tmp_path, "b", 7, gsm, mth)
    c = _mix(run, tmp_path, "c", 8, gsm, mth)
    assert a.read_bytes() == b.read_bytes()
    rows_a, rows_c = _verl(a), _verl(c)
    assert [r["extra_info"]["problem"] for r in rows_a] != [r["extra_info"]["problem"] for r in rows_c]
    sources_a = [r["extra_info"]["source"] for r in rows_a]
    assert sources_a.count("gsm8k") == 10 and sources_a.count("math") == 5
    assert sorted(r["extra_info"]["problem"] for r in rows_a if r["extra_info"]["source"] == "gsm8k") == \
        sorted([f"g{i}?" for i in range(5)] * 2)
    assert [r["extra_info"]["index"] for r in rows_a] == list(range(15))
    manifest = json.loads((tmp_path / "a" / "mix.parquet.manifest.json").read_text())
    assert [(s["name"], s["weight"], s["rows_written"]) for s in manifest["sources"]] == \
        [("gsm8k", 2.0, 10), ("math", 0.5, 5)]
    assert manifest["outputs"][0]["sha256"] == __import__("hashlib").sha256(a.read_bytes()).hexdigest()


def test_several_training_files_become_one(run, tmp_path):
    """miles reads one --prompt-data file: two prepared files are merged into one that holds both."""
    g = _prepare(run, tmp_path / "1", "gsm8k", sources.gsm8k(tmp_path / "g", [("a?", "1")], [("t", "0")]),
                 outputs=("g.parquet",))[0]
    m = _prepare(run, tmp_path / "2", "math", sources.math_lighteval(tmp_path / "m", [("b?", "2")], [("t", "0")]),
                 outputs=("m.parquet",))[0]
    out = tmp_path / "both.jsonl"
    code, _, err = run("prepare", "--from-file", str(g), "--from-file", f"{m}:1", "--output", str(out))
    assert code == 0, err
    lines = _miles(out)
    assert sorted((x["metadata"]["data_source"], x["label"]) for x in lines) == \
        [("DigitalLearningGmbH/MATH-lighteval", "2"), ("openai/gsm8k", "1")]


def test_pass_rate_filter_where_the_column_exists(run, tmp_path):
    """Rows outside [min, max] are dropped in a source that has the column; a source without it is reported."""
    src = sources.gsm8k(tmp_path / "g", [("easy?", "1"), ("mid?", "2"), ("hard?", "3")], [("t", "0")])
    table = pq.read_table(src / "main" / "train-00000-of-00001.parquet")
    pq.write_table(table.append_column("pass_rate", __import__("pyarrow").array([1.0, 0.5, 0.0])),
                   src / "main" / "train-00000-of-00001.parquet")
    mth = sources.math_lighteval(tmp_path / "m", [("m?", "1")], [("t", "0")])
    out = tmp_path / "f.parquet"
    code, _, err = run("prepare", "--dataset", "gsm8k", "--dataset", "math", "--source-dir", f"gsm8k={src}",
                       "--source-dir", f"math={mth}", "--min-pass-rate", "0.1", "--max-pass-rate", "0.9",
                       "--output", str(out))
    assert code == 0, err
    rows = _verl(out)
    assert sorted(r["extra_info"]["problem"] for r in rows) == ["m?", "mid?"]
    assert [r["extra_info"]["pass_rate"] for r in rows if r["extra_info"]["source"] == "gsm8k"] == [0.5]
    manifest = json.loads((tmp_path / "f.parquet.manifest.json").read_text())
    assert manifest["sources"][0]["pass_rate"]["filtered"] == 2
    assert manifest["sources"][1]["pass_rate"] == {"column": "pass_rate", "present": False, "filtered": 0}


def test_registry_has_every_supported_source():
    assert sorted(REGISTRY) == ["aime", "apps", "codecontests", "dapo-math-17k", "gsm8k", "math", "taco"]
    for a in REGISTRY.values():
        assert a.pinned, f"{a.name}: {a.revision} is not a 40-hex commit"
        assert "confirmed" in a.provenance, f"{a.name}: provenance says neither confirmed nor unconfirmed"
