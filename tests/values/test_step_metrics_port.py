"""`global.job.supervision.stepMetricsPort` on a port Ray itself opens in the pod (KubeRay's defaults, shared by
the chart's schema and the linter from grpo_stack.rayports) is refused where it is written: by grpo-lint's schema
check with the key, the line and the ports to avoid, and by Helm's own engine; another port passes both."""

from __future__ import annotations

import pytest
import yaml
from grpo_stack.cli.lint import main
from grpo_stack.rayports import POD_PORTS
from grpo_stack.render import RenderError, render


@pytest.mark.parametrize("port", [POD_PORTS["dashboard"], POD_PORTS["metrics"], POD_PORTS["dashboard-agent"]])
def test_a_port_ray_opens_is_refused_by_grpo_lint_and_by_helm(tmp_path, capsys, repo_root, port):
    values = tmp_path / "v.yaml"
    values.write_text(f"global:\n  job:\n    supervision:\n      stepMetricsPort: {port}\n")
    code = main(["--no-cache", "--base", str(repo_root / "values" / "qwen3-8b.yaml"), str(values)])
    out = capsys.readouterr()
    assert code == 2, out
    assert f"{values}:4:7: global.job.supervision.stepMetricsPort: {port}" in out.out
    assert "Ray already listens there" in out.out
    shipped = yaml.safe_load((repo_root / "values" / "qwen3-8b.yaml").read_text())
    shipped["global"]["job"].setdefault("supervision", {})["stepMetricsPort"] = port
    with pytest.raises(RenderError, match="stepMetricsPort"):
        render(shipped)
    shipped["global"]["job"]["supervision"]["stepMetricsPort"] = 9108
    render(shipped)
