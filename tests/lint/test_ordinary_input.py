"""Ordinary input never becomes an internal error (exit 3), CLI arguments are validated like values, reads are
bounded, and errors are located where they start (issue: reliability under a new fuzzer)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from grpo_stack.cli.lint import main as lint_main
from grpo_stack.cli.render import main as render_main

REPO = Path(__file__).resolve().parents[2]
BASE = REPO / "values" / "qwen3-8b.yaml"


def run(argv, capsys, tool=lint_main):
    code = tool([*argv])
    out, err = capsys.readouterr()
    return code, out + err


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


# ---- item 7: no internal error -------------------------------------------------------------------------------

def test_schema_error_under_a_merge_key_is_located(tmp_path, capsys):
    bad = write(tmp_path, "merge.yaml", 'defaults: &d\n  nodes: "x"\nglobal:\n  cluster:\n    <<: *d\n')
    code, text = run(["--no-cache", "--base", str(BASE), bad], capsys)
    assert code == 2, text
    assert f"{bad}:5:5: global.cluster.nodes:" in text  # at the `<<` that brings the bad value here


def test_schema_error_under_an_alias_is_located_where_the_alias_is_used(tmp_path, capsys):
    """The key path is the alias's place (the anchor itself is fine where it stands)."""
    bad = write(tmp_path, "alias.yaml", 'defaults: &d\n  mountPath: 5\nglobal:\n  storage: *d\n')
    code, text = run(["--no-cache", "--base", str(BASE), bad], capsys)
    assert code == 2, text
    assert f"{bad}:4:3: global.storage.mountPath:" in text


def test_a_recursive_anchor_is_located_without_looping(tmp_path, capsys):
    bad = write(tmp_path, "loop.yaml", 'global: &g\n  storage:\n    mountPath: 5\n  self: *g\n')
    code, text = run(["--no-cache", "--base", str(BASE), bad], capsys)
    assert code == 2 and "internal error" not in text, text


def test_null_preset_is_an_error_at_the_key(tmp_path, capsys):
    bad = write(tmp_path, "preset.yaml", "global:\n  job:\n    model:\n      preset: null\n")
    code, text = run(["--no-cache", "--base", str(BASE), bad], capsys)
    assert code in (1, 2), text
    assert "internal error" not in text and f"{bad}:4:7" in text and "global.job.model.preset" in text


def test_a_file_name_too_long_is_an_input_error(tmp_path, capsys):
    code, text = run(["--no-cache", str(tmp_path / ("a" * 5000 + ".yaml"))], capsys)
    assert code == 2 and "internal error" not in text and "too long" in text, text


def test_corrupt_cache_entries_are_misses(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("GRPO_LINT_CACHE_DIR", str(tmp_path / "cache"))
    first, _ = run([str(BASE)], capsys)
    for entry in (tmp_path / "cache").rglob("*.json"):
        entry.write_text("[1]")
    again, text = run([str(BASE)], capsys)
    assert first == again == 0, text


@pytest.mark.parametrize("kind", ["file", "unreadable"])
def test_unusable_cache_dir_is_skipped(kind, tmp_path, capsys, monkeypatch):
    """The cache docstring's promise: a cache that cannot be read or written is skipped, never an error."""
    cache = tmp_path / "cache"
    if kind == "file":
        cache.write_text("not a directory")
    else:
        cache.mkdir()
        cache.chmod(0)
    monkeypatch.setenv("GRPO_LINT_CACHE_DIR", str(cache / "lint"))
    try:
        code, text = run([str(BASE)], capsys)
    finally:
        if kind != "file":
            cache.chmod(0o700)
    assert code == 0, text


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads through chmod 000: the permission case needs a user")
def test_file_in_unreadable_directory_is_an_input_error(tmp_path, capsys):
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "v.yaml").write_text(BASE.read_text())
    locked.chmod(0)
    try:
        code, text = run(["--no-cache", str(locked / "v.yaml")], capsys)
    finally:
        locked.chmod(0o700)
    assert code == 2 and "internal error" not in text, text


def test_closed_output_pipe_is_not_an_internal_error():
    """`grpo-render values.yaml --job | true`: the reader is gone before the command is written."""
    proc = subprocess.run(f"{sys.executable} -m grpo_stack.cli.render {BASE} --job | true; echo $PIPESTATUS",
                          shell=True, capture_output=True, text=True, executable="/bin/bash", timeout=120)
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stdout.strip() in ("0", "141"), proc.stdout


# ---- item 9: CLI arguments ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("argv", [["--namespace", "Bad_NS!"], ["--namespace", "a" * 64], ["--namespace", ""],
                                  ["--release", "A B"], ["--release", "a" * 54], ["--release", ""],
                                  ["--select", "NOPE"], ["--select", "GRPO101,NOPE"], [""]])
def test_bad_arguments_are_usage_errors(argv, capsys):
    args = argv if argv == [""] else ["--no-cache", str(BASE), *argv]
    code, text = run(args, capsys)
    assert code == 2, text
    assert "internal error" not in text


@pytest.mark.parametrize("argv", [["--namespace", ""], ["--namespace", "Bad_NS!"], ["--release", "A B"]])
def test_render_refuses_bad_release_arguments(argv, capsys):
    code, text = run([str(BASE), *argv], capsys, tool=render_main)
    assert code == 2 and argv[0] in text, text


def test_select_accepts_codes_and_names(capsys):
    code, text = run(["--no-cache", str(BASE), "--select", "GRPO002,pod-seccomp"], capsys)
    assert code == 0, text


# ---- item 8: bounded reads ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("source", ["/dev/zero", "fifo"])
def test_model_config_read_is_bounded(source, tmp_path, capsys):
    if source == "fifo":
        source = str(tmp_path / "fifo")
        os.mkfifo(source)
    code, text = run(["--no-cache", str(BASE), "--model-config", source], capsys)
    assert code == 2 and source in text, text


def test_path_values_are_bounded(tmp_path, capsys):
    long = "/".join(["d" * 200] * 6)  # 1205 characters: over the 1024 limit that keeps the ConfigMap < 1 MiB
    bad = write(tmp_path, "paths.yaml", f"global:\n  job:\n    data:\n      trainFiles: [{long}]\n")
    code, text = run(["--no-cache", "--base", str(BASE), bad], capsys)
    assert code == 2 and "global.job.data.trainFiles.0" in text, text


# ---- item 12: errors located where they start --------------------------------------------------------------------

@pytest.mark.parametrize("text,line", [
    ('global:\n  cluster:\n    gpuInstanceType: "p5en\n    nodes: 1\n    gpusPerNode: 8\n', 3),
    ("global:\n  cluster: {nodes: 1,\n    gpusPerNode: 8\n  job:\n    x: 1\n", 2),
    ("a: [1, 2\nb: 3\nc: 4\n", 1),
])
def test_unclosed_constructs_are_located_where_they_open(text, line, tmp_path, capsys):
    bad = write(tmp_path, "open.yaml", text)
    code, out = run(["--no-cache", bad], capsys)
    assert code == 2 and f"{bad}:{line}:" in out and "never closed" in out, out


def test_null_subchart_section_is_located_without_go_artefacts(tmp_path, capsys):
    bad = write(tmp_path, "null.yaml", "raycluster: ~\n")
    code, out = run(["--no-cache", "--base", str(BASE), bad], capsys)
    assert code == 2 and f"{bad}:1:1: raycluster:" in out and "%!" not in out, out


def test_empty_key_is_located_at_itself(tmp_path, capsys):
    bad = write(tmp_path, "empty.yaml", 'global:\n  cluster:\n    "": 1\n')
    code, out = run(["--no-cache", "--base", str(BASE), bad], capsys)
    assert code == 2 and f"{bad}:3:5:" in out, out


def test_a_top_level_empty_key_is_located_at_itself_with_its_name(tmp_path, capsys):
    """Issue: reported at 1:1 with no key path (the empty path read as the document itself)."""
    bad = write(tmp_path, "empty.yaml", 'global: {}\n"": 1\n')
    code, text = run(["--no-cache", bad], capsys)
    assert code == 2, text
    assert f'{bad}:2:1: unknown key "" (a key with an empty name; allowed here: ' in text
