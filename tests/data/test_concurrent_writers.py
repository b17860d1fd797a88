"""Two `grpo-data prepare` runs writing one output (issue: they shared one `.partial` file; the result was an
unreadable parquet reported written with exit 0, and a manifest whose sha256 did not match). Now the second
writer is refused at once, naming the output; whatever ends on disk matches its manifest, every time.

The writers are two real processes (forked after the imports, started together at a barrier), with different
seeds so that their files differ byte for byte and a mixed-up pair would show."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import sys

import pyarrow.parquet as pq

from . import sources

ROUNDS = 20


def _writer(barrier, argv: list[str], err_path: str) -> None:
    from grpo_stack.cli.data import main

    with open(err_path, "w") as err:
        sys.stdout = sys.stderr = err  # the parent's streams may be pytest's capture buffers
        barrier.wait()
        code = main(argv)
        err.flush()
    os._exit(code)


def _prepared_source(run, tmp_path):
    src = sources.gsm8k(tmp_path / "g", [(f"q{i}?", str(i)) for i in range(40)], [("t", "0")])
    base = tmp_path / "base.parquet"
    code, _, err = run("prepare", "--dataset", "gsm8k", "--source-dir", f"gsm8k={src}", "--allow-mutable",
                       "--output", str(base))
    assert code == 0, err
    return base


def test_two_writers_of_one_output_never_leave_a_file_its_manifest_does_not_describe(run, tmp_path):
    base = _prepared_source(run, tmp_path)
    out = tmp_path / "mix.parquet"
    ctx = multiprocessing.get_context("fork")
    refused = 0
    for n in range(ROUNDS):
        barrier = ctx.Barrier(2)
        procs, errs = [], []
        for seed in (2 * n, 2 * n + 1):
            err = tmp_path / f"err-{n}-{seed}"
            argv = ["prepare", "--from-file", str(base), "--seed", str(seed), "--output", str(out),
                    "--cache-dir", str(tmp_path / "cache"), "--no-progress"]
            procs.append(ctx.Process(target=_writer, args=(barrier, argv, str(err))))
            errs.append(err)
        for p in procs:
            p.start()
        for p in procs:
            p.join(120)
        codes = [p.exitcode for p in procs]
        texts = [e.read_text() for e in errs]
        assert sorted(codes) in ([0, 0], [0, 2]), (n, codes, texts)
        for code, text in zip(codes, texts, strict=True):
            assert "Traceback" not in text
            if code == 2:
                refused += 1
                assert f"--output {out}: another grpo-data" in text and "is writing it now" in text, text
        manifest = json.loads((tmp_path / "mix.parquet.manifest.json").read_text())
        (written,) = manifest["outputs"]
        assert written["sha256"] == hashlib.sha256(out.read_bytes()).hexdigest(), (n, codes)
        assert pq.read_table(out).num_rows == written["rows"] == 40
        assert not list(tmp_path.glob("*.partial")) and not list(tmp_path.glob(".*.partial"))
    print(f"{ROUNDS} rounds of two writers: {refused} second writers refused, the rest ran one after the other")


def test_an_output_that_is_also_an_input_is_refused(run, tmp_path):
    base = _prepared_source(run, tmp_path)
    before = base.read_bytes()
    code, _, err = run("prepare", "--from-file", str(base), "--output", str(base))
    assert code == 2 and f"--output {base}: is also an input" in err, err
    assert base.read_bytes() == before
    code, _, err = run("holdout", "--train", str(base), "--dataset", "gsm8k", "--output", str(base))
    assert code == 2 and "is also an input" in err, err


def test_one_output_named_twice_is_refused(run, tmp_path):
    base = _prepared_source(run, tmp_path)
    out = tmp_path / "o.parquet"
    code, _, err = run("prepare", "--from-file", str(base), "--output", str(out), "--output",
                       str(tmp_path / "." / "o.parquet"))
    assert code == 2 and "given twice" in err, err
