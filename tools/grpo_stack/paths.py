"""Where the charts and shipped values live.

The chart is found, first match wins: `--chart DIR` (`use_chart`), `$GRPO_CHART`, the copy inside an installed
package (`grpo_stack/_charts/`, copied from `charts/` when the wheel is built, see tools/setup.py), the
checkout this package sits in (an editable install or `PYTHONPATH=tools`)."""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
PACKAGED_CHARTS = PACKAGE_DIR / "_charts"
# tools/grpo_stack/paths.py -> repository root is two levels above the package.
REPO_ROOT = Path(os.environ.get("GRPO_STACK_ROOT", PACKAGE_DIR.parents[1]))
CHECKOUT_CHART = REPO_ROOT / "charts" / "grpo-stack"
VALUES_DIR = REPO_ROOT / "values"
# The evaluation release's overlay a run's file is also linted with (lint/evaluation_view.py).
EVAL_OVERLAY = VALUES_DIR / "eval" / "eval.yaml"
# The subcharts, in documentation order (the typed model in schema/components.py defines their values).
SUBCHART_NAMES = ("raycluster", "sandbox-fusion", "reward-service", "fsx-utils", "vllm", "lm-eval")


def _default_chart() -> Path:
    if os.environ.get("GRPO_CHART"):
        return Path(os.environ["GRPO_CHART"])
    packaged = PACKAGED_CHARTS / "grpo-stack"
    return packaged if (packaged / "Chart.yaml").is_file() else CHECKOUT_CHART


_chart = [_default_chart()]
# The checkout's chart, for the repository tools that write into it (schema generation); readers use chart_dir().
CHART_DIR = CHECKOUT_CHART
SUBCHART_DIR = CHART_DIR / "charts"


def chart_dir() -> Path:
    return _chart[0]


def subchart_dir() -> Path:
    return _chart[0] / "charts"


def use_chart(path: str | Path) -> None:
    """Render and validate against this chart directory (`--chart`); call before the first render."""
    _chart[0] = Path(path)

