"""grpo-data tests read only what they write: the Hub is switched off for the whole directory."""

from __future__ import annotations

import os

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"


@pytest.fixture
def run(tmp_path, capsys):
    """grpo-data in-process: returns (exit status, stdout, stderr); caches under tmp_path."""
    from grpo_stack.cli.data import main

    def _run(*argv: str):
        code = main([*argv[:1], *argv[1:], "--cache-dir", str(tmp_path / "cache"), "--no-progress"]
                    if argv and argv[0] in ("prepare", "holdout") else list(argv))
        out = capsys.readouterr()
        return code, out.out, out.err

    return _run
