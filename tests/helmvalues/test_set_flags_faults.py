"""Hostile or broken `--set*` arguments: huge, deep, non-finite, wrong-typed. Each is one located input error
(exit 2), never an internal error or a hang."""

from __future__ import annotations

import pytest
from grpo_stack.cli.lint import main as lint_main
from grpo_stack.cli.render import main as render_main
from grpo_stack.paths import VALUES_DIR

BASE = str(VALUES_DIR / "qwen3-8b.yaml")


def lint(capsys, *argv: str) -> tuple[int, str]:
    code = lint_main(["--no-cache", BASE, *argv])
    out = capsys.readouterr()
    return code, out.out + out.err


@pytest.mark.parametrize(("flag", "argument", "message"), [
    ("--set", "a" + "[0]" * 5000 + "=1", "nested deeper than 64 levels"),
    ("--set", ".".join(["k"] * 32) + "=1", "nests more than 30 levels"),
    ("--set", "a" + "[0].a" * 3000 + "=1", "nested deeper than 64 levels"),
    ("--set-json", "a=" + "[" * 100000 + "]" * 100000, "nested too deeply"),
    ("--set-json", "a=" + "[" * 70 + "]" * 70, "nested deeper than 64 levels"),
    ("--set-json", "{" + '"a":{' * 70 + "}" * 71, "nested deeper than 64 levels"),
    ("--set-json", "a=NaN", "not JSON"),
    ("--set-json", "a=1e400", "not JSON"),
    ("--set-json", "a=" + "9" * 5000, "not JSON"),
    ("--set", "q[99999999999999999999]=1", "not an integer"),
    ("--set", "q[70000]=1", "greater than maximum supported index"),
    ("--set", "global.job.trainer.saveFreq[0]=1", "global.job.trainer.saveFreq is a number in the values below"),
    ("--set", "global.job.rollout.samplesPerPrompt=" + "9" * 30, "global.job.rollout.samplesPerPrompt"),
])
def test_a_hostile_argument_is_one_located_input_error(capsys, flag, argument, message):
    code, out = lint(capsys, flag, argument)
    assert code == 2, out
    assert message in out and f"{flag} " in out
    assert "internal error" not in out and "Traceback" not in out


def test_the_longest_argument_linux_passes_is_read_and_its_finding_stays_short(capsys):
    """128 KiB (Linux's MAX_ARG_STRLEN for one argument) of assignments: read, linted, one bounded line."""
    argument = ",".join(f"raycluster.extra{i}=v" for i in range(6000))[:128 * 1024 - 1].rstrip(",=v") + "=v"
    code, out = lint(capsys, "--set", argument)
    assert code == 2 and "raycluster: unknown key(s) 'extra0, extra1" in out
    assert max(len(line) for line in out.splitlines()) < 1200


def test_set_file_of_a_file_too_big_or_not_a_file(capsys, tmp_path):
    big = tmp_path / "big.txt"
    big.write_bytes(b"x" * (6 * 1024 * 1024))
    code, out = lint(capsys, "--set-file", f"global.job.trainer.experiment={big}")
    assert code == 2 and "big.txt" in out and "internal error" not in out
    code, out = lint(capsys, "--set-file", f"global.job.trainer.experiment={tmp_path}")
    assert code == 2 and "is a directory" in out
    code, out = lint(capsys, "--set-file", "global.job.trainer.experiment=https://example.com/x")
    assert code == 2 and "not fetched here" in out


def test_render_refuses_what_lint_refuses(capsys):
    code = render_main([BASE, "--set-json", "global.job.rollout.samplesPerPrompt=Infinity"])
    err = capsys.readouterr().err
    assert code == 2 and "--set-json" in err and "not JSON" in err
