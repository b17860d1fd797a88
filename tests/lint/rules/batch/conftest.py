"""Batch-rule tests: the GRPO3xx modules registered with the engine; shipped job specs rendered once."""

from __future__ import annotations

from typing import Any

import pytest
from grpo_stack import render as render_module
from grpo_stack.lint.rules import RULES
from grpo_stack.lint.rules.batch import BATCH_MODULES


@pytest.fixture(autouse=True)
def batch_rules_registered(monkeypatch):
    """lint_values runs the registry; make sure it holds the batch rules (a no-op once they are listed there)."""
    for module in BATCH_MODULES:
        if module.CODE not in RULES:
            monkeypatch.setitem(RULES, module.CODE, module)


@pytest.fixture(scope="session")
def base_specs(shipped_values) -> dict[str, dict[str, Any]]:
    """The job spec of every shipped values file, rendered once."""
    out = {}
    for name, values in shipped_values.items():
        out[name] = render_module.job_spec(render_module.render(values, release="grpo", namespace="grpo"))
    return out
