"""grpo-data holdout: the audit's percentages on data with a known overlap, the threshold and its exits."""

from __future__ import annotations

import json

import pyarrow.parquet as pq

from . import sources


def _train(run, tmp_path, gsm_train, apps_train):
    g = sources.gsm8k(tmp_path / "g", gsm_train, [(f"Test {i}?", str(i)) for i in range(8)])
    a = sources.apps(tmp_path / "a", apps_train, [(f"Task {i}.", {"inputs": ["1"], "outputs": ["1"]})
                                                  for i in range(4)])
    out = tmp_path / "train.parquet"
    code, _, err = run("prepare", "--dataset", "gsm8k", "--dataset", "apps", "--source-dir", f"gsm8k={g}",
                       "--source-dir", f"apps={a}", "--allow-mutable", "--output", str(out))
    assert code == 0, err
    return out, g, a


def _holdout(run, train, g, a, *extra):
    return run("holdout", "--train", str(train), "--dataset", "gsm8k", "--dataset", "apps",
               "--source-dir", f"gsm8k={g}", "--source-dir", f"apps={a}", "--allow-mutable", *extra)


def test_audit_reports_exact_overlap_per_source(run, tmp_path):
    """3 of 8 GSM8K test problems and 3 of 4 APPS test problems (differently spaced/cased) are in training:
    37.5 % and 75.0 %, 6 of 12 overall; the default threshold (0 %) fails with exit 1 and writes nothing."""
    io = {"inputs": ["1"], "outputs": ["1"]}
    train, g, a = _train(run, tmp_path,
                         [("test 0?", "0"), ("Test  1?", "1"), ("TEST 2?", "2"), ("Other?", "9")],
                         [("task 0.", io), ("Task 1.", io), ("  Task 2.\n", io), ("Unrelated.", io)])
    out = tmp_path / "val.parquet"
    code, stdout, err = _holdout(run, train, g, a, "--output", str(out))
    assert code == 1
    lines = stdout.splitlines()
    assert lines[0].split() == ["source", "val", "rows", "in", "train", "overlap"]
    assert lines[1].split() == ["apps", "4", "3", "75.0%"]
    assert lines[2].split() == ["gsm8k", "8", "3", "37.5%"]
    assert lines[3].split() == ["all", "12", "6", "50.0%"]
    assert "overlap above 0% in apps, gsm8k (worst apps 75.0%)" in err
    assert not out.exists()


def test_threshold_and_allow_overlap(run, tmp_path):
    io = {"inputs": ["1"], "outputs": ["1"]}
    train, g, a = _train(run, tmp_path, [("Test 0?", "0"), ("x?", "1")], [("Task 0.", io), ("y.", io)])
    out = tmp_path / "val.parquet"
    # gsm8k 12.5 %, apps 25 %: a 30 % threshold passes, 20 % fails, --allow-overlap passes and records it.
    assert _holdout(run, train, g, a, "--output", str(out), "--max-overlap", "30")[0] == 0
    assert _holdout(run, train, g, a, "--output", str(out), "--max-overlap", "20")[0] == 1
    code, _, _ = _holdout(run, train, g, a, "--output", str(out), "--allow-overlap")
    assert code == 0
    manifest = json.loads((tmp_path / "val.parquet.manifest.json").read_text())
    assert manifest["allow_overlap"] is True
    assert manifest["train"]["sha256"] == __import__("hashlib").sha256(train.read_bytes()).hexdigest()
    assert [(r["source"], r["rows"], r["overlapping"], r["percent"]) for r in manifest["audit"]] == \
        [("apps", 4, 1, 25.0), ("gsm8k", 8, 1, 12.5), ("all", 12, 2, 16.67)]
    assert len(pq.read_table(out)) == 12


def test_drop_overlap_removes_contaminated_problems(run, tmp_path):
    io = {"inputs": ["1"], "outputs": ["1"]}
    train, g, a = _train(run, tmp_path, [("Test 0?", "0")], [("Task 0.", io)])
    out = tmp_path / "val.jsonl"
    code, stdout, _ = _holdout(run, train, g, a, "--output", str(out), "--drop-overlap")
    assert code == 0
    assert "dropped 2 overlapping problem(s); 10 remain" in stdout
    problems = {json.loads(x)["metadata"]["problem"] for x in out.read_text().splitlines()}
    assert "Test 0?" not in problems and "Task 0." not in problems and len(problems) == 10
    code, stdout, _ = run("holdout", "--train", str(train), "--val", str(out))
    assert code == 0 and stdout.splitlines()[-1].split() == ["all", "10", "0", "0.0%"]


def test_capped_sample_is_seeded(run, tmp_path):
    io = {"inputs": ["1"], "outputs": ["1"]}
    train, g, a = _train(run, tmp_path, [("x?", "1")], [("y.", io)])
    outs = []
    for tag, seed in (("a", "1"), ("b", "1"), ("c", "2")):
        out = tmp_path / tag / "val.parquet"
        code, _, err = run("holdout", "--train", str(train), "--dataset", "gsm8k:3", "--source-dir", f"gsm8k={g}",
                           "--seed", seed, "--output", str(out))
        assert code == 0, err
        outs.append([r["extra_info"]["problem"] for r in pq.read_table(out).to_pylist()])
    assert len(outs[0]) == 3 and outs[0] == outs[1]
    assert sorted(outs[0]) != sorted(outs[2]) or outs[0] != outs[2]
