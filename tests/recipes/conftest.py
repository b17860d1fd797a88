"""The real local Ray head the recipe tests submit to, one for the package: its driver imports a stand-in
`verl.trainer.main_ppo` that records the arguments it received, exits 3 when the experiment is named "fail-3", and
runs the supervised-submit stand-in trainer (supervised_trainer.py) when it is named "supervised"."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.rayhead import RayHead

VENV_BIN = Path(sys.executable).parent
SUPERVISED_TRAINER = Path(__file__).with_name("supervised_trainer.py")


@pytest.fixture(scope="package")
def fake_verl(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("fake-verl")
    pkg = root / "verl" / "trainer"
    pkg.mkdir(parents=True)
    (root / "verl" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "main_ppo.py").write_text(
        "import json, sys\nprint('GRPO-ARGV ' + json.dumps(sys.argv[1:]), flush=True)\n"
        "if 'trainer.experiment_name=supervised' in sys.argv:\n"
        f"    import runpy; runpy.run_path({str(SUPERVISED_TRAINER)!r})\n"
        "sys.exit(3 if 'trainer.experiment_name=fail-3' in sys.argv else 0)\n"
    )
    return root


@pytest.fixture(scope="package")
def ray_head(fake_verl):
    """A real Ray head on loopback; the stand-in verl is on its PYTHONPATH so the driver can import it."""
    env = {**os.environ, "PYTHONPATH": str(fake_verl), "RAY_USAGE_STATS_ENABLED": "0",
           "PATH": f"{VENV_BIN}:{os.environ['PATH']}"}
    head = RayHead(VENV_BIN / "ray", gpus=8, cpus=4, env=env)
    head.start(head.accepts_a_job, timeout=240)
    yield head.address, env
    head.stop()
