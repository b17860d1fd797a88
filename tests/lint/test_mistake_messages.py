"""What a user reads for the commonest slips in a values file, through grpo-lint itself: a misspelt key names the
key it was meant to be (at its own level, or at the level it belongs to), a misspelt value names the allowed value,
and one mistake gives one finding."""

from __future__ import annotations

import pytest
from grpo_stack.cli.lint import main as lint_main
from grpo_stack.paths import REPO_ROOT

BASE = str(REPO_ROOT / "values" / "qwen3-8b.yaml")


def lint(tmp_path, capsys, text: str) -> tuple[int, list[str]]:
    values = tmp_path / "mine.yaml"
    values.write_text(text)
    code = lint_main(["--no-cache", "--base", BASE, str(values)])
    out = capsys.readouterr()
    return code, [line for line in (out.out + out.err).splitlines() if "[input error]" in line]


@pytest.mark.parametrize(("text", "hint"), [
    # one letter wrong, at its own level
    ("global:\n  job:\n    verl:\n      batch:\n        trainBatchSise: 64\n", "did you mean trainBatchSize?"),
    # case only
    ("global:\n  cluster:\n    gpuspernode: 8\n", "did you mean gpusPerNode?"),
    # the right name at the wrong level: named by its full path
    ("global:\n  job:\n    trainer:\n      trainBatchSize: 64\n", "did you mean global.job.verl.batch.trainBatchSize?"),
])
def test_a_misspelt_or_misplaced_key_names_the_key_meant(tmp_path, capsys, text, hint):
    code, lines = lint(tmp_path, capsys, text)
    assert code == 2 and len(lines) == 1 and "unknown key" in lines[0] and hint in lines[0], lines


def test_an_unknown_key_with_nothing_close_gets_no_guess(tmp_path, capsys):
    code, lines = lint(tmp_path, capsys, "global:\n  job:\n    trainer:\n      zzqx: 1\n")
    assert code == 2 and len(lines) == 1 and "did you mean" not in lines[0] and "allowed here:" in lines[0]


def test_a_misspelt_value_is_one_finding_naming_the_value_meant(tmp_path, capsys):
    """`megatorn` is outside the backend enum and outside verl's narrower backend branch: one finding, not two."""
    code, lines = lint(tmp_path, capsys, "global:\n  job:\n    backend: megatorn\n")
    assert code == 2 and len(lines) == 1, lines
    assert "'megatorn' is not one of 'fsdp', 'megatron' (did you mean 'megatron'?)" in lines[0]


def test_a_value_only_a_branch_refuses_keeps_the_branchs_reason(tmp_path, capsys):
    code, lines = lint(tmp_path, capsys, "global:\n  job:\n    framework: miles\n    backend: fsdp\n")
    assert code == 2 and any("framework miles trains with megatron" in line for line in lines), lines


def test_a_null_at_an_enum_key_is_one_finding_saying_null_is_not_allowed(tmp_path, capsys):
    """A null is outside the enum too; the finding is the one that says what to do with a null."""
    code, lines = lint(tmp_path, capsys, "global:\n  job:\n    backend: null\n")
    assert code == 2 and len(lines) == 1 and "global.job.backend: null is not allowed here" in lines[0], lines
