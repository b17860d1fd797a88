"""The verl key catalogue (tools/grpo_stack/catalog/verl_keys.json) is exactly what verl 0.9.1 composes: the
extractor re-run inside the oracle venv must reproduce the committed file. Prevents an override check against
a stale or hand-edited key list (a real key refused, or a dead key accepted)."""

from __future__ import annotations

import json
import subprocess

import pytest
from grpo_stack.catalog.verl_keys import DATA

from tests.job.cases import require_oracle

EXTRACTOR = DATA.with_name("extract_verl_keys.py")


@pytest.mark.oracle
def test_catalogue_equals_what_verl_composes():
    client = require_oracle()
    proc = subprocess.run([str(client.oracle_python()), str(EXTRACTOR)], capture_output=True, text=True,
                          timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout) == json.loads(DATA.read_text()), (
        f"regenerate: $ORACLE_VENV/bin/python {EXTRACTOR.relative_to(DATA.parents[3])} > "
        f"{DATA.relative_to(DATA.parents[3])}")
