"""Fixtures of the monitoring tests: the built promtool toolset, the chart rendered with monitoring on."""

from __future__ import annotations

import os

import pytest
import yaml

from tests.conftest import REPO_ROOT

MONITORING_VALUES = REPO_ROOT / "values" / "monitoring" / "monitoring.yaml"
# The shipped file with the reward service and the sandbox on; the vLLM server is switched on beside it.
TRAINING = "qwen3-235b"


@pytest.fixture(scope="session")
def promtool_dir():
    """The promtool toolset's directory. Skips when it is not built, except under CI=true, where this tier never
    skips (`make cluster-tools` builds it)."""
    from grpo_stack.monitoring.promql import ToolsMissing, tools_dir

    try:
        return tools_dir()
    except ToolsMissing as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(str(exc))
        pytest.skip(str(exc))


@pytest.fixture(scope="session")
def monitoring_values() -> dict:
    return yaml.safe_load(MONITORING_VALUES.read_text())["global"]["monitoring"]


@pytest.fixture(scope="session")
def step_metrics_port() -> int:
    """The port values/monitoring/monitoring.yaml serves the step metrics on."""
    return yaml.safe_load(MONITORING_VALUES.read_text())["global"]["job"]["supervision"]["stepMetricsPort"]


@pytest.fixture(scope="session")
def rendered_on(render_values, monitoring_values, step_metrics_port):
    """qwen3-235b with values/monitoring/monitoring.yaml on top and the vLLM server on."""
    return render_values(TRAINING, {"global.monitoring": monitoring_values, "global.components.vllm": True,
                                    "global.job.supervision.stepMetricsPort": step_metrics_port})
