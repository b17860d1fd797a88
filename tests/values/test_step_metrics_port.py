"""`global.job.supervision.stepMetricsPort` on a port Ray itself opens in the pod (KubeRay's defaults, shared by
the chart's schema and the linter from grpo_stack.rayports) is refused where it is written: by grpo-lint's schema
check with the key, the line and the ports to avoid, and by Helm's own engine; another port passes both."""

from __future__ import annotations

import pytest
from grpo_stack.rayports import POD_PORTS
from grpo_stack.render import RenderError

from tests.values.one_key import lint_over_shipped, render_over_shipped

KEY = "global.job.supervision.stepMetricsPort"


@pytest.mark.parametrize("port", [POD_PORTS["dashboard"], POD_PORTS["metrics"], POD_PORTS["dashboard-agent"]])
def test_a_port_ray_opens_is_refused_by_grpo_lint_and_by_helm(tmp_path, capsys, repo_root, port):
    code, out, values = lint_over_shipped(tmp_path, capsys, repo_root, KEY, port)
    assert code == 2, out
    assert f"{values}:4:7: global.job.supervision.stepMetricsPort: {port}" in out
    assert "Ray already listens there" in out
    with pytest.raises(RenderError, match="stepMetricsPort"):
        render_over_shipped(repo_root, KEY, port)
    render_over_shipped(repo_root, KEY, 9108)
