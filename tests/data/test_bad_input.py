"""Bad input to grpo-data: one clear line on stderr, exit 2, no traceback and no output file."""

from __future__ import annotations

import os

import pytest

from . import sources


def _one_line(err: str) -> str:
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert "Traceback" not in err
    return err


def test_unknown_dataset(run, tmp_path):
    code, _, err = run("prepare", "--dataset", "gsm9k", "--output", str(tmp_path / "o.parquet"))
    assert code == 2
    assert "unknown dataset 'gsm9k' (known: aime, apps, codecontests, dapo-math-17k, gsm8k, math, taco)" in \
        _one_line(err)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_unwritable_output(run, tmp_path):
    src = sources.gsm8k(tmp_path / "g", [("a?", "1")], [("t", "0")])
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        code, _, err = run("prepare", "--dataset", "gsm8k", "--source-dir", f"gsm8k={src}",
                           "--output", str(locked / "train.parquet"))
    finally:
        locked.chmod(0o700)
    assert code == 2
    assert f"{locked / 'train.parquet'}: output directory is not writable" in _one_line(err)


def test_output_under_a_file(run, tmp_path):
    """An output whose directory cannot exist (a file is in the way): refused before any source is read."""
    (tmp_path / "afile").write_text("x")
    code, _, err = run("prepare", "--dataset", "gsm8k", "--output", str(tmp_path / "afile" / "train.parquet"))
    assert code == 2
    assert f"{tmp_path / 'afile' / 'train.parquet'}: output directory is not writable" in _one_line(err)


def test_output_suffix_names_a_layout(run, tmp_path):
    code, _, err = run("prepare", "--dataset", "gsm8k", "--output", str(tmp_path / "o.csv"))
    assert code == 2 and "must end in .parquet (verl) or .jsonl (miles)" in _one_line(err)


@pytest.mark.parametrize("command", ["prepare", "holdout"])
def test_an_output_in_the_other_frameworks_layout_is_refused(run, tmp_path, command):
    """With --framework (as NOTES prints it), a miles run's .parquet output, which grpo-data would fill with verl's
    rows, is refused before anything is read, naming the file to write instead; nothing is written."""
    out = tmp_path / "train.parquet"
    extra = ["--train", str(tmp_path / "t.jsonl")] if command == "holdout" else []
    code, _, err = run(command, *extra, "--dataset", "gsm8k", "--framework", "miles", "--output", str(out))
    assert code == 2 and "grpo-data writes verl's layout to a .parquet file" in _one_line(err)
    assert str(tmp_path / "train.jsonl") in err and not out.exists()


def test_empty_dataset(run, tmp_path):
    """A source whose split has rows but none usable (no answers) is an error, not an empty training file."""
    src = sources.math_lighteval(tmp_path / "m", [("a", None), ("b", None)], [("t", "1")])
    out = tmp_path / "o.parquet"
    code, _, err = run("prepare", "--dataset", "math", "--source-dir", f"math={src}", "--output", str(out))
    assert code == 2
    assert "math (train): no usable examples (read 2, skipped 2)" in _one_line(err)
    assert not out.exists()


def test_zero_row_source(run, tmp_path):
    src = sources.gsm8k(tmp_path / "g", [], [("t", "0")])
    code, _, err = run("prepare", "--dataset", "gsm8k", "--source-dir", f"gsm8k={src}",
                       "--output", str(tmp_path / "o.parquet"))
    assert code == 2 and "gsm8k (train): empty dataset: main/train-*.parquet under" in _one_line(err)


def test_missing_revision(run, tmp_path):
    """A branch given as revision (the parquet conversion branch here) without --allow-mutable: named, with the
    flag that fixes it."""
    code, _, err = run("prepare", "--dataset", "taco", "--revision", "taco=refs/convert/parquet",
                       "--output", str(tmp_path / "o.parquet"))
    assert code == 2
    assert "taco: revision 'refs/convert/parquet' is a branch, not a commit" in _one_line(err)


def test_empty_revision_value(run, tmp_path):
    code, _, err = run("prepare", "--dataset", "taco", "--revision", "taco=", "--output", str(tmp_path / "o.parquet"))
    assert code == 2 and "--revision 'taco=': expected NAME=VALUE" in _one_line(err)


def test_wrong_layout_names_the_missing_columns(run, tmp_path):
    """Files of another dataset under a source's path are refused before any row is converted."""
    src = sources.math_lighteval(tmp_path / "m", [("a", "1")], [("t", "1")])
    (src / "main").mkdir()
    (src / "data" / "train-00000-of-00001.parquet").rename(src / "main" / "train-00000-of-00001.parquet")
    code, _, err = run("prepare", "--dataset", "gsm8k", "--source-dir", f"gsm8k={src}",
                       "--output", str(tmp_path / "o.parquet"))
    assert code == 2 and "lacks column(s) question, answer" in _one_line(err)


@pytest.mark.parametrize("content, message", [
    (b"<html>rate limited</html>\n", "train.jsonl: not a JSON-lines file"),
    (b"\n\n", "apps (train): empty dataset: train.jsonl under"),
    # the parser's own reason follows datasets' generic message (its wording is the JSON parser's)
    (b'{"id": 0, "question": "q"}\n{"id": 1, "question"\n', "apps: cannot read train.jsonl under"),
])
def test_bad_json_lines_source(run, tmp_path, content, message):
    """APPS is read from JSON lines: an HTML error page saved in its place, an empty file or a truncated line is
    one clear line, never a traceback."""
    src = sources.apps(tmp_path / "apps", [("q", {"inputs": ["1"], "outputs": ["1"]})], [])
    (src / "train.jsonl").write_bytes(content)
    code, _, err = run("prepare", "--dataset", "apps", "--source-dir", f"apps={src}",
                       "--output", str(tmp_path / "o.parquet"))
    assert code == 2 and message in _one_line(err), err
    assert not err.rstrip().endswith("while generating the dataset"), "the parser's reason is left out"


def test_no_files_for_split(run, tmp_path):
    (tmp_path / "empty").mkdir()
    code, _, err = run("prepare", "--dataset", "gsm8k", "--source-dir", f"gsm8k={tmp_path / 'empty'}",
                       "--output", str(tmp_path / "o.parquet"))
    assert code == 2 and "gsm8k: no files match main/train-*.parquet under" in _one_line(err)


@pytest.mark.parametrize("weight", ["0", "-1", "nan", "inf"])
def test_bad_weight(run, tmp_path, weight):
    code, _, err = run("prepare", "--dataset", f"gsm8k:{weight}", "--output", str(tmp_path / "o.parquet"))
    assert code == 2 and "weight must be a finite number > 0" in _one_line(err)


def test_holdout_train_file_missing_or_not_parquet(run, tmp_path):
    code, _, err = run("holdout", "--train", str(tmp_path / "nope.parquet"), "--val", str(tmp_path / "v.parquet"))
    assert code == 2 and "nope.parquet: no such file" in _one_line(err)
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"not parquet at all")
    code, _, err = run("holdout", "--train", str(bad), "--val", str(bad))
    assert code == 2 and "bad.parquet: not a parquet file" in _one_line(err)


def test_holdout_needs_exactly_one_mode(run, tmp_path):
    code, _, err = run("holdout", "--train", str(tmp_path / "t.parquet"))
    assert code == 2 and "either --dataset" in _one_line(err)


def test_source_dir_for_a_dataset_not_requested(run, tmp_path):
    code, _, err = run("prepare", "--dataset", "gsm8k", "--source-dir", f"math={tmp_path}",
                       "--output", str(tmp_path / "o.parquet"))
    assert code == 2 and "math is not one of the --dataset sources" in _one_line(err)


def test_console_script_exit_status(tmp_path):
    """The installed entry point, as the fsx-utils pod runs it."""
    import subprocess
    import sys
    from pathlib import Path

    exe = Path(sys.executable).parent / "grpo-data"
    r = subprocess.run([str(exe), "prepare", "--dataset", "nope", "--output", str(tmp_path / "o.parquet")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.startswith("grpo-data: unknown dataset 'nope'")
    assert r.stderr.count("\n") == 1


def test_fifo_inputs_do_not_block(run, tmp_path):
    """A FIFO given as a training or prepared file is refused at once instead of blocking on the read."""
    fifo = tmp_path / "pipe.parquet"
    os.mkfifo(fifo)
    code, _, err = run("holdout", "--train", str(fifo), "--val", str(fifo))
    assert code == 2 and f"{fifo}: not a regular file" in _one_line(err)
    code, _, err = run("prepare", "--from-file", str(fifo), "--output", str(tmp_path / "o.parquet"))
    assert code == 2 and f"--from-file {fifo}: not a regular file" in _one_line(err)


def test_from_file_that_is_not_verl_layout(run, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    other = tmp_path / "other.parquet"
    pq.write_table(pa.Table.from_pylist([{"question": "q", "answer": "a"}]), other)
    code, _, err = run("prepare", "--from-file", str(other), "--output", str(tmp_path / "o.parquet"))
    assert code == 2 and f"{other}: row 0: not a verl-layout row (KeyError: 'prompt')" in _one_line(err)


def test_miles_file_with_a_broken_line(run, tmp_path):
    bad = tmp_path / "train.jsonl"
    bad.write_text('{"prompt": "p", "label": "1", "metadata": {}}\n{not json\n')
    code, _, err = run("holdout", "--train", str(bad), "--val", str(bad))
    assert code == 2 and f"{bad}:2: not a miles-layout line" in _one_line(err)


def _prepared(tmp_path, rows, name="rows.parquet"):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / name
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def _row(**changes):
    row = {"data_source": "openai/gsm8k", "prompt": [{"role": "user", "content": "1+1?"}], "ability": "math",
           "reward_model": {"style": "rule", "ground_truth": "2"},
           "extra_info": {"split": "train", "index": 0, "problem": "1+1?"}}
    row.update(changes)
    return row


@pytest.mark.parametrize("changes,word", [({"prompt": 5}, "prompt"), ({"data_source": None}, "data_source"),
                                          ({"data_source": ""}, "data_source")])
def test_prepared_rows_the_reward_service_would_refuse(run, tmp_path, changes, word):
    """An int prompt or a null data_source used to pass, and the reward service then refused every sample."""
    path = _prepared(tmp_path, [_row(**changes)])
    code, _, err = run("prepare", "--from-file", str(path), "--output", str(tmp_path / "o.parquet"))
    assert code == 2 and f"{path}: row 0: {word}" in _one_line(err), err
    assert not (tmp_path / "o.parquet").exists()


@pytest.mark.parametrize("endpoint", ["::::", "ftp://hub.example", "huggingface.co", "http://", "http://[::1",
                                      "https://hub.example:port", "https://hub example.com"])
@pytest.mark.parametrize("command", ["prepare", "holdout"])
def test_endpoint_that_is_no_http_url(run, tmp_path, command, endpoint):
    """`--endpoint '::::'` ended in the HTTP client's traceback: one line naming the option, exit 2, before any
    source is read."""
    where = ["--output", str(tmp_path / "o.parquet")] if command == "prepare" else \
        ["--train", str(tmp_path / "train.parquet"), "--output", str(tmp_path / "val.parquet")]
    code, _, err = run(command, "--dataset", "gsm8k", *where, "--endpoint", endpoint)
    assert code == 2
    assert f"--endpoint {endpoint!r}: not an http(s) URL with a host" in _one_line(err)
    assert not (tmp_path / "o.parquet").exists() and not (tmp_path / "val.parquet").exists()
