"""Odd files given to grpo-lint and grpo-render: refused with exit 2 and one line naming them, promptly.

Prevents the reviewed hangs and crashes: a FIFO blocked forever, /dev/zero was read whole (8.9 GB) before the
size check; and an internal error must be exit 3 with one line (--debug for the traceback), never exit 1."""

from __future__ import annotations

import os

import pytest
from grpo_stack.cli.lint import main as lint_main
from grpo_stack.cli.render import main as render_main
from grpo_stack.filereader import MAX_BYTES

from tests.conftest import REPO_ROOT
from tests.fuzz.harness import check, console, in_process


def odd_files(tmp) -> dict[str, str]:
    fifo = tmp / "fifo.yaml"
    os.mkfifo(fifo)
    big = tmp / "big.yaml"
    with open(big, "wb") as f:  # sparse: larger than the cap without using the disk
        f.truncate(MAX_BYTES + 1)
    loop = tmp / "loop.yaml"
    os.symlink(loop, loop)
    dangling = tmp / "dangling.yaml"
    os.symlink(tmp / "nowhere.yaml", dangling)
    (tmp / "bom.yaml").write_bytes(b"\xef\xbb\xbfglobal: {}\n")
    (tmp / "utf16.yaml").write_bytes("global: {}\n".encode("utf-16"))
    (tmp / "empty.yaml").write_bytes(b"")
    (tmp / "dir.yaml").mkdir()
    return {"fifo": str(fifo), "dev-zero": "/dev/zero", "dev-null": "/dev/null", "big": str(big),
            "symlink-loop": str(loop), "dangling": str(dangling), "utf16": str(tmp / "utf16.yaml"),
            "empty": str(tmp / "empty.yaml"), "directory-named-yaml": str(tmp / "dir.yaml"), "missing": str(tmp / "x"),
            "bom": str(tmp / "bom.yaml")}


EXPECTED = {"fifo": "not a regular file (a FIFO)", "dev-zero": "not a regular file (a character device)",
            "dev-null": "not a regular file", "big": "larger than", "symlink-loop": "cannot read",
            "dangling": "no such file", "utf16": "", "empty": "empty", "directory-named-yaml": "",
            "missing": "no such file"}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return odd_files(tmp_path_factory.mktemp("odd"))


@pytest.mark.parametrize("name", sorted(EXPECTED))
@pytest.mark.parametrize("tool", ["grpo-lint", "grpo-render"])
def test_odd_file_in_process(files, name, tool):
    main = lint_main if tool == "grpo-lint" else render_main
    outcome = in_process(main, [files[name]])
    check(outcome, f"{tool} {name}")
    assert outcome.code == 2, outcome.text
    assert files[name] in outcome.text and EXPECTED[name] in outcome.text, outcome.text


@pytest.mark.parametrize("name", ["fifo", "dev-zero", "big"])
def test_odd_file_console(files, name):
    """Through the console scripts: the hang cases return promptly with exit 2."""
    for tool in ("grpo-lint", "grpo-render"):
        outcome = console(tool, [files[name]])
        check(outcome, f"{tool} {name}")
        assert outcome.code == 2 and EXPECTED[name] in outcome.err + outcome.out


def test_bom_is_read_like_helm(files):
    """A UTF-8 byte-order mark is not an error (Helm strips it)."""
    outcome = in_process(lint_main, ["--base", str(REPO_ROOT / "values" / "qwen3-8b.yaml"), files["bom"]])
    check(outcome, "bom")
    assert outcome.code == 0, outcome.text


@pytest.mark.parametrize("tool", ["grpo-lint", "grpo-render"])
def test_internal_error_is_exit_3_with_one_line(tool, monkeypatch, capsys):
    """An unexpected exception is exit 3 with one line naming it; --debug adds the traceback."""
    import grpo_stack.values as values

    def boom(*a, **k):
        raise RuntimeError("simulated defect")

    monkeypatch.setattr(values, "merge_user_values", boom)
    monkeypatch.setattr("grpo_stack.lint.engine.merge_user_values", boom)  # grpo-render reads values through it too
    main = lint_main if tool == "grpo-lint" else render_main
    path = str(REPO_ROOT / "values" / "qwen3-8b.yaml")
    assert main([path]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error: RuntimeError: simulated defect" in err and "Traceback" not in err
    assert main([path, "--debug"]) == 3
    assert "Traceback" in capsys.readouterr().err
