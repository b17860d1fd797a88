"""`global.job.trainer.saveFreq: 0` is refused where it is written (issue: it was accepted, and verl reads it as
"never save", so a failed run restarted from step 0). Both checks that see values refuse it: grpo-lint's schema
check, with the key, the line and what to write instead, and Helm's own engine (`helm install` would refuse)."""

from __future__ import annotations

import pytest
import yaml
from grpo_stack.cli.lint import main
from grpo_stack.render import RenderError, render


def test_save_freq_zero_is_refused_by_grpo_lint_and_by_helm(tmp_path, capsys, repo_root):
    values = tmp_path / "v.yaml"
    values.write_text("global:\n  job:\n    trainer:\n      saveFreq: 0\n")
    code = main(["--no-cache", "--base", str(repo_root / "values" / "qwen3-8b.yaml"), str(values)])
    out = capsys.readouterr()
    assert code == 2, out
    assert f"{values}:4:7: global.job.trainer.saveFreq: 0 is not allowed here" in out.out
    assert "write -1 for never" in out.out
    shipped = yaml.safe_load((repo_root / "values" / "qwen3-8b.yaml").read_text())
    shipped["global"]["job"]["trainer"]["saveFreq"] = 0
    with pytest.raises(RenderError, match="saveFreq"):
        render(shipped)
    shipped["global"]["job"]["trainer"]["saveFreq"] = -1
    render(shipped)  # -1 says "never" plainly and stays allowed
