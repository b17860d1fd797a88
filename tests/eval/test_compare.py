"""grpo-eval compare on lm-eval output: lm-eval 0.4.10 wrote fixtures/ (make_lmeval_fixtures.py); the tests derive
the other cases from those files. Each test names the predecessor failure it guards against."""

from __future__ import annotations

import json
import shutil
import struct

import pytest
from grpo_stack.cli.eval import main

from .lmeval_output import DATE, REAL_BASELINE, REAL_RUN, edit_results, write_gsm8k_run

# GSM8K, n = 1319: baseline 1117 right (0.8469), run 1150 right (0.8719). 1065 documents both get right, 52 only
# the baseline, 85 only the run, 117 neither.
N, BOTH, BASE_ONLY, RUN_ONLY = 1319, 1065, 52, 85


def gsm8k_pair(tmp_path, log_samples=True):
    base = [1.0] * BOTH + [1.0] * BASE_ONLY + [0.0] * RUN_ONLY + [0.0] * (N - BOTH - BASE_ONLY - RUN_ONLY)
    run = [1.0] * BOTH + [0.0] * BASE_ONLY + [1.0] * RUN_ONLY + [0.0] * (N - BOTH - BASE_ONLY - RUN_ONLY)
    return (write_gsm8k_run(tmp_path / "run", run, log_samples),
            write_gsm8k_run(tmp_path / "base", base, log_samples))


def run_json(capsys, *argv):
    code = main(["compare", *argv, "--format", "json"])
    out = capsys.readouterr()
    return code, (json.loads(out.out) if out.out else None), out.err


def row(doc, task, metric):
    return next(r for r in doc["rows"] if r["task"] == task and r["metric"] == metric)


def test_unpaired_gsm8k_is_about_1_85_sigma(tmp_path, capsys):
    """The review's example: 0.8469 -> 0.8719 at n = 1319 is ~1.85σ from the two stderrs, not the 2.83σ quoted.
    Hand computation: se = sqrt(p(1-p)/(n-1)) = 0.009920 and 0.009206; 0.02502 / sqrt(sum of squares) = 1.849;
    two-sided p = 0.0645."""
    run, base = gsm8k_pair(tmp_path, log_samples=False)
    code, doc, _ = run_json(capsys, "--run", str(run), "--baseline", str(base))
    assert code == 0
    r = row(doc, "gsm8k", "exact_match,strict-match")
    assert round(r["baseline"]["value"], 4) == 0.8469 and round(r["run"]["value"], 4) == 0.8719
    assert round(r["baseline"]["stderr"], 4) == 0.0099 and round(r["run"]["stderr"], 4) == 0.0092
    assert r["delta"]["test"] == "unpaired" and round(r["delta"]["z"], 2) == 1.85
    assert r["delta"]["p"] == pytest.approx(0.0645, abs=5e-4)
    assert "unpaired" in r["note"] and "no per-sample results" in r["note"]


def test_paired_gsm8k_is_2_83_sigma_given_agreement(tmp_path, capsys):
    """The same two scores are 2.83σ only paired: 33 net documents over 137 discordant ones.
    Hand computation: mean d = 33/1319 = 0.025019; var = (137 - 1319 d^2) / 1318 = 0.10332;
    se = sqrt(var / 1319) = 0.008850; z = 2.827; two-sided p = 0.0047."""
    run, base = gsm8k_pair(tmp_path)
    code, doc, _ = run_json(capsys, "--run", str(run), "--baseline", str(base))
    assert code == 0
    r = row(doc, "gsm8k", "exact_match,strict-match")
    assert r["delta"]["test"] == "paired" and r["delta"]["n"] == N
    assert round(r["delta"]["z"], 2) == 2.83
    assert r["delta"]["p"] == pytest.approx(0.0047, abs=5e-5)
    assert r["note"] == f"paired over {N} documents"


def test_paired_needs_the_same_documents(tmp_path, capsys):
    """Per-sample scores on different documents cannot be paired: the tool says so and falls back to unpaired."""
    run, base = gsm8k_pair(tmp_path)
    f = run / "grpo-eval" / f"samples_gsm8k_{DATE}.jsonl"
    lines = f.read_text().splitlines()
    f.write_text("\n".join(lines[:-1]) + "\n")  # one flexible-extract document fewer
    code, doc, _ = run_json(capsys, "--run", str(run), "--baseline", str(base))
    assert code == 0
    assert row(doc, "gsm8k", "exact_match,strict-match")["delta"]["test"] == "paired"
    flex = row(doc, "gsm8k", "exact_match,flexible-extract")
    assert flex["delta"]["test"] == "unpaired" and "different documents" in flex["note"]


def test_task_variants_in_one_file_stay_distinct(capsys):
    """Predecessor: prefix matching folded humaneval, humaneval_p4 and humaneval_p10 onto one key and kept
    whichever came last. Here each id keeps its own metrics, as lm-eval wrote them, stderr beside each."""
    code, doc, _ = run_json(capsys, "--run", str(REAL_RUN), "--baseline", str(REAL_BASELINE))
    assert code == 0
    got = {(r["task"], r["metric"]): r["run"] for r in doc["rows"]}
    written = json.loads((REAL_RUN / "grpo-eval" / f"results_{DATE}.json").read_text())["results"]
    assert set(got) == {("gsm8k", "exact_match,strict-match"), ("gsm8k", "exact_match,flexible-extract"),
                        ("humaneval", "pass@1,create_test"), ("humaneval_p4", "pass@1,create_test"),
                        ("humaneval_p4", "pass@4,create_test"), ("humaneval_p10", "pass@1,create_test"),
                        ("humaneval_p10", "pass@10,create_test")}
    for (task, metric), m in got.items():
        name, _, flt = metric.partition(",")
        assert m == {"value": written[task][metric], "stderr": written[task][f"{name}_stderr,{flt}"]}
    assert got[("humaneval", "pass@1,create_test")] != got[("humaneval_p4", "pass@1,create_test")]


def test_markdown_shows_stderr_sigma_p_and_test(capsys):
    code = main(["compare", "--run", str(REAL_RUN), "--baseline", str(REAL_BASELINE)])
    out = capsys.readouterr().out
    assert code == 0
    line = next(x for x in out.splitlines() if x.startswith("| humaneval_p4 | pass@4"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[2] == "0.5000 ± 0.1508" and cells[3] == "0.6667 ± 0.1421"
    assert cells[4] == "+0.1667" and cells[7] == "paired over 12 documents"
    float(cells[5]), float(cells[6])


def test_unknown_task_id_is_an_error(tmp_path, capsys):
    """A future variant (mbpp_p20) or a renamed task must fail, not fold into a known one."""
    def rename(d):
        d["results"]["humaneval_p20"] = d["results"].pop("humaneval_p4")
    run = edit_results(REAL_RUN, tmp_path / "run", rename)
    code = main(["compare", "--run", str(run), "--baseline", str(REAL_BASELINE)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert "unknown task id 'humaneval_p20'" in err and "results_" in err
    assert main(["compare", "--run", str(REAL_RUN), "--baseline", str(REAL_BASELINE), "--tasks", "humaneval_p"]) == 2
    assert "unknown task id 'humaneval_p'" in capsys.readouterr().err


def test_missing_metric_is_missing_not_zero(tmp_path, capsys):
    """Predecessor: float(stats.get("mean_score", 0.0)) turned an absent metric into a real-looking 0.0 and a large
    negative delta. Here it is reported missing and the exit status is 1."""
    def drop(d):
        del d["results"]["humaneval_p4"]["pass@4,create_test"]
    run = edit_results(REAL_RUN, tmp_path / "run", drop)
    code, doc, err = run_json(capsys, "--run", str(run), "--baseline", str(REAL_BASELINE))
    assert code == 1
    r = row(doc, "humaneval_p4", "pass@4,create_test")
    assert r["run"] is None and r["delta"] is None and "missing" in r["note"]
    assert "humaneval_p4 pass@4,create_test: missing from the run results" in err
    main(["compare", "--run", str(run), "--baseline", str(REAL_BASELINE)])
    md = capsys.readouterr().out
    line = next(x for x in md.splitlines() if x.startswith("| humaneval_p4 | pass@4"))
    assert "missing" in line and "0.0000" not in line


def test_task_missing_from_one_side(tmp_path, capsys):
    def drop(d):
        del d["results"]["gsm8k"]
    base = edit_results(REAL_BASELINE, tmp_path / "base", drop)
    code, doc, err = run_json(capsys, "--run", str(REAL_RUN), "--baseline", str(base))
    assert code == 1 and "gsm8k: not in the baseline results" in err
    assert row(doc, "gsm8k", "exact_match,strict-match")["baseline"] is None


def test_missing_stderr_without_samples_cannot_give_sigma(tmp_path, capsys):
    """A significance claim needs a stderr (or per-sample scores): without either the delta is missing, exit 1."""
    def na(d):
        d["results"]["humaneval"]["pass@1_stderr,create_test"] = "N/A"
    run = edit_results(REAL_RUN, tmp_path / "run", na)
    (run / "grpo-eval" / f"samples_humaneval_{DATE}.jsonl").unlink()
    code, doc, err = run_json(capsys, "--run", str(run), "--baseline", str(REAL_BASELINE))
    assert code == 1
    r = row(doc, "humaneval", "pass@1,create_test")
    assert r["run"] == {"value": 0.5, "stderr": None} and r["delta"] is None
    assert "no stderr in the run results" in err
    main(["compare", "--run", str(run), "--baseline", str(REAL_BASELINE)])
    assert "0.5000 ± stderr missing" in capsys.readouterr().out


def test_missing_stderr_with_samples_still_pairs(tmp_path, capsys):
    def na(d):
        d["results"]["humaneval"]["pass@1_stderr,create_test"] = "N/A"
    run = edit_results(REAL_RUN, tmp_path / "run", na)
    code, doc, _ = run_json(capsys, "--run", str(run), "--baseline", str(REAL_BASELINE))
    assert code == 0 and row(doc, "humaneval", "pass@1,create_test")["delta"]["test"] == "paired"


def test_missing_run_exits_1_with_one_line(tmp_path, capsys):
    """Predecessor: two nonexistent runs printed a complete markdown report with empty tables and exited 0."""
    for argv in (["--run", str(tmp_path / "nope"), "--baseline", str(tmp_path / "nope2")],
                 ["--run", str(REAL_RUN), "--baseline", str(tmp_path)]):
        code = main(["compare", *argv])
        out = capsys.readouterr()
        assert code == 1 and out.out == "" and out.err.count("\n") == 1 and "missing" in out.err


@pytest.mark.parametrize("text, expect", [
    ('{"results": {"gsm8k": ', "malformed JSON"),
    ('{"results": {"gsm8k": {"exact_match,strict-match": NaN}}}', "non-finite number NaN"),
    ('{"results": {"gsm8k": {"exact_match,strict-match": "0.8"}}}', "expected a finite number"),
    ('{"results": {"gsm8k": {"exact_match,strict-match": true}}}', "expected a finite number"),
    ('{"results": {"gsm8k": {"exact_match,strict-match": 1e999}}}', "expected a finite number"),
    ('{"results": {"gsm8k": {"exact_match,strict-match": 73.5}}}', "outside [0, 1]"),
    ('{"results": {"gsm8k": {"exact_match,strict-match": -0.1}}}', "outside [0, 1]"),
    ('{"results": {"gsm8k": {"exact_match,strict-match": 0.5, "exact_match_stderr,strict-match": 2}}}',
     "outside [0, 1]"),
    ('[1, 2]', "not an lm-eval results file"),
    ('[' * 100000 + ']' * 100000, "nested too deeply"),
    ('\x00\x01', "malformed JSON"),
])
def test_bad_results_file_exits_2_with_one_line(tmp_path, capsys, text, expect):
    run = edit_results(REAL_RUN, tmp_path / "run", lambda d: text)
    code = main(["compare", "--run", str(run), "--baseline", str(REAL_BASELINE)])
    out = capsys.readouterr()
    assert code == 2 and out.out == ""
    assert out.err.count("\n") == 1 and expect in out.err and f"results_{DATE}.json" in out.err


def test_bad_samples_line_names_file_and_line(tmp_path, capsys):
    run = tmp_path / "run"
    shutil.copytree(REAL_RUN, run)
    f = run / "grpo-eval" / f"samples_gsm8k_{DATE}.jsonl"
    f.write_text(f.read_text() + "{not json\n")
    assert main(["compare", "--run", str(run), "--baseline", str(REAL_BASELINE)]) == 2
    err = capsys.readouterr().err
    assert f"samples_gsm8k_{DATE}.jsonl:25: malformed JSON" in err


def test_results_file_that_is_a_fifo(tmp_path, capsys):
    import os

    run = tmp_path / "run" / "grpo-eval"
    run.mkdir(parents=True)
    os.mkfifo(run / f"results_{DATE}.json")
    assert main(["compare", "--run", str(run.parent), "--baseline", str(REAL_BASELINE)]) == 1  # no regular file


def test_different_generation_budget_is_not_comparable(tmp_path, capsys):
    """Predecessor: the two val-split paths generated at 24576 and 10240 tokens and were compared as equals."""
    run = write_gsm8k_run(tmp_path / "run", [1.0, 0.0, 1.0], max_gen_toks=24576)
    base = write_gsm8k_run(tmp_path / "base", [1.0, 0.0, 0.0], max_gen_toks=10240)
    assert main(["compare", "--run", str(run), "--baseline", str(base)]) == 2
    err = capsys.readouterr().err
    assert "max_gen_toks (24576 vs 10240)" in err and "not comparable" in err


def test_curve_with_a_gap_shows_a_dash(tmp_path, capsys):
    """A step not evaluated yet is a dash in the curve; run and baseline stay strict."""
    steps = tmp_path / "steps"
    shutil.copytree(REAL_BASELINE, steps / "step-50")
    shutil.copytree(REAL_RUN, steps / "step-150")
    (steps / "step-100").mkdir()  # evaluation started, no results yet
    argv = ["compare", "--run", str(REAL_RUN), "--baseline", str(REAL_BASELINE), "--curve", "50,100,150,200",
            "--curve-dir", str(steps / "step-{step}")]
    png = tmp_path / "curve.png"
    assert main([*argv, "--plot", str(png)]) == 0
    md = capsys.readouterr().out
    line = next(x for x in md.splitlines() if x.startswith("| humaneval_p4 | pass@4") and "step" not in x
                and md.index(x) > md.index("step 50"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[2:] == ["0.5000 ± 0.1508", "—", "0.6667 ± 0.1421", "—"]
    head = png.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", head[16:24])
    assert width >= 600 and height >= 7 * 250  # one panel per metric

    code, doc, _ = run_json(capsys, *argv[1:])
    points = next(s for s in doc["curve"] if s["task"] == "gsm8k")["points"]
    assert [p["evaluated"] for p in points] == [True, False, True, False]
    # --run stays strict in curve mode
    code = main(["compare", "--run", str(tmp_path / "absent"), "--baseline", str(REAL_BASELINE),
                 "--curve", "50", "--curve-dir", str(steps / "step-{step}")])
    assert code == 1


def test_curve_step_missing_a_metric_is_missing(tmp_path, capsys):
    def drop(d):
        del d["results"]["gsm8k"]["exact_match,flexible-extract"]
    edit_results(REAL_RUN, tmp_path / "step-10", drop)
    code = main(["compare", "--run", str(REAL_RUN), "--baseline", str(REAL_BASELINE), "--curve", "10",
                 "--curve-dir", str(tmp_path / "step-{step}")])
    assert code == 1 and "step 10" in capsys.readouterr().err


@pytest.mark.parametrize("extra", [["--curve", "10"], ["--curve", "x", "--curve-dir", "a/{step}"],
                                   ["--curve", "1,1", "--curve-dir", "a/{step}"], ["--curve-dir", "a"],
                                   ["--plot", "x.png"], ["--format", "html"]])
def test_bad_arguments_exit_2_one_line(capsys, extra):
    code = main(["compare", "--run", str(REAL_RUN), "--baseline", str(REAL_BASELINE), *extra]) if \
        extra[0] != "--format" else None
    if code is None:
        with pytest.raises(SystemExit) as e:
            main(["compare", "--run", str(REAL_RUN), "--baseline", str(REAL_BASELINE), *extra])
        code = e.value.code
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
