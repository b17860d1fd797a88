"""`grpo-eval compare --plot` after `pip install ./tools` (no matplotlib): one line naming the extra, exit 2, no
traceback and no table printed first."""

from __future__ import annotations

import subprocess
import sys

from tests.eval.test_compare import REAL_BASELINE, REAL_RUN

# matplotlib blocked the way a missing package behaves (ImportError on import), in a fresh interpreter.
WITHOUT_MATPLOTLIB = ("import sys; sys.modules['matplotlib'] = None; from grpo_stack.cli.eval import main; "
                      "raise SystemExit(main(sys.argv[1:]))")


def test_plot_without_matplotlib_names_the_extra(tmp_path):
    argv = ["compare", "--run", str(REAL_RUN), "--baseline", str(REAL_BASELINE), "--curve", "50",
            "--curve-dir", str(REAL_RUN), "--plot", str(tmp_path / "curve.png")]
    proc = subprocess.run([sys.executable, "-c", WITHOUT_MATPLOTLIB, *argv], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [
        "grpo-eval compare: --plot needs matplotlib, an optional extra: pip install './tools[plot]'"]
    assert not (tmp_path / "curve.png").exists()
