"""The gate on outputs set aside before its rules were written (fixtures/held_out, cited in SOURCES.json): two
healthy p5 EFA runs from other sources than the ones the floors cite, a g4dn.metal EFA run with NCCL's debug log,
and a DCGM report of a faulty GPU. Measured once when the rules were done and reported; never tuned on."""

from __future__ import annotations

import pytest

from tests.fabricgate.verdicts import FIXTURES, SOURCES, findings_for, verdict

HELD_OUT = sorted((FIXTURES / "held_out").iterdir())


@pytest.mark.parametrize("path", HELD_OUT, ids=lambda p: p.stem)
def test_held_out_verdict(path):
    assert verdict(findings_for(path)) == SOURCES[path.name]["verdict_expected"], findings_for(path)
