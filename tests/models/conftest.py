"""grpo-models tests: a generated model snapshot and the CLI run in-process; the Hub is switched off."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .modeldir import make_model

os.environ["HF_HUB_OFFLINE"] = "1"


@pytest.fixture
def snapshot(tmp_path) -> Path:
    return make_model(tmp_path / "snapshot")


@pytest.fixture
def models(capsys):
    from grpo_stack.cli.models import main

    def _run(*argv: str):
        code = main([*argv, "--no-progress"])
        out = capsys.readouterr()
        return code, out.out, out.err

    return _run
