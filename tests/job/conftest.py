"""Shared fixtures of the job/batch-math tests: every shipped values file's job spec, rendered once."""

from __future__ import annotations

from typing import Any

import pytest
from grpo_stack import render as render_module


@pytest.fixture(scope="session")
def base_specs(shipped_values) -> dict[str, dict[str, Any]]:
    return {name: render_module.job_spec(render_module.render(values, release="grpo", namespace="grpo"))
            for name, values in shipped_values.items()}


def pytest_configure(config):
    config.addinivalue_line("markers", "oracle: differential tests against verl/megatron-core in .venv-oracle")
