"""`global.job.trainer.saveFreq: 0` is refused where it is written (issue: it was accepted, and verl reads it as
"never save", so a failed run restarted from step 0). Both checks that see values refuse it: grpo-lint's schema
check, with the key, the line and what to write instead, and Helm's own engine (`helm install` would refuse)."""

from __future__ import annotations

import pytest
from grpo_stack.render import RenderError

from tests.values.one_key import lint_over_shipped, render_over_shipped

KEY = "global.job.trainer.saveFreq"


def test_save_freq_zero_is_refused_by_grpo_lint_and_by_helm(tmp_path, capsys, repo_root):
    code, out, values = lint_over_shipped(tmp_path, capsys, repo_root, KEY, 0)
    assert code == 2, out
    assert f"{values}:4:7: global.job.trainer.saveFreq: 0 is not allowed here" in out
    assert "write -1 for never" in out
    with pytest.raises(RenderError, match="saveFreq"):
        render_over_shipped(repo_root, KEY, 0)
    render_over_shipped(repo_root, KEY, -1)  # -1 says "never" plainly and stays allowed
