"""`helm lint --strict` (Helm's SDK through helm_python) is clean for the umbrella with every shipped values file
and for every subchart on its own, given only the `global` section (subcharts have no global defaults)."""

from __future__ import annotations

import pytest
from grpo_stack.paths import CHART_DIR, SUBCHART_DIR

KUBE_VERSION = "v1.33.0"
SUBCHARTS = ["raycluster", "sandbox-fusion", "reward-service", "fsx-utils", "vllm", "lm-eval"]


def lint(path, values: dict) -> list[str]:
    import helm_python

    helm_python.disable_logging()
    result = helm_python.lint(str(path), values, strict=True, with_subcharts=True, namespace="team-a",
                              kube_version=KUBE_VERSION)
    for m in result.get("messages") or []:
        print(f"[severity {m['severity']}] {m.get('path')}: {m.get('error')}")
    assert result.get("total_charts_linted", 0) >= 1, result
    problems = [f"{m.get('path')}: {m.get('error')}".strip() for m in result.get("messages") or []
                if m["severity"] >= 2]
    return problems + [e for e in result.get("errors") or [] if not any(e.strip() in p for p in problems)]


def test_umbrella_lints_clean(values_name, shipped_values):
    """`helm lint -f values/<file>.yaml` (what ct lint runs) must pass for every shipped file."""
    problems = lint(CHART_DIR, shipped_values[values_name])
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("subchart", SUBCHARTS)
def test_subchart_lints_clean_with_global_only(subchart, shipped_values):
    from grpo_stack.render import merged_values

    merged_global = merged_values(shipped_values["qwen3-235b"])["global"]
    problems = lint(SUBCHART_DIR / subchart, {"global": merged_global})
    assert not problems, "\n".join(problems)
