"""Where the repository's charts and shipped values live, found from this package."""

from __future__ import annotations

import os
from pathlib import Path

# tools/grpo_stack/paths.py -> repository root is two levels above the package.
REPO_ROOT = Path(os.environ.get("GRPO_STACK_ROOT", Path(__file__).resolve().parents[2]))
CHART_DIR = REPO_ROOT / "charts" / "grpo-stack"
SUBCHART_DIR = CHART_DIR / "charts"
VALUES_DIR = REPO_ROOT / "values"
# The subcharts, in documentation order (the typed model in schema/components.py defines their values).
SUBCHART_NAMES = ("raycluster", "sandbox-fusion", "reward-service", "fsx-utils", "vllm", "lm-eval")
