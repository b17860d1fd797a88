"""Conventions every grpo-* command keeps, run as a user runs them (the installed console scripts):
`--version`, a bash completion script that real bash loads, a closed pipe that ends quietly, and a clean lint
on a terminal that says how many files it checked."""

from __future__ import annotations

import os
import pty
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from grpo_stack import __version__
from grpo_stack.paths import REPO_ROOT

BIN = Path(sys.executable).parent
COMMANDS = ["grpo-lint", "grpo-render", "grpo-data", "grpo-models", "grpo-eval", "grpo-images", "grpo-cluster",
            "grpo-run"]


def run(*argv, **kw):
    return subprocess.run([str(BIN / argv[0]), *argv[1:]], capture_output=True, text=True, timeout=120, **kw)


@pytest.mark.parametrize("prog", COMMANDS)
def test_version(prog):
    done = run(prog, "--version")
    assert done.returncode == 0 and done.stdout.strip() == f"{prog} {__version__}", done


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
@pytest.mark.parametrize("prog", COMMANDS)
def test_bash_completion_loads_and_completes(prog):
    script = run(prog, "completion", "bash").stdout
    probe = (f'source /dev/stdin; complete -p {prog}; COMP_WORDS=({prog} --ver); COMP_CWORD=1; '
             f'_{prog.replace("-", "_")}; echo "${{COMPREPLY[@]}}"')
    done = subprocess.run(["bash", "-c", probe], input=script, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert f"complete -o filenames -F _{prog.replace('-', '_')} {prog}" in done.stdout
    assert done.stdout.splitlines()[-1] == "--version"


def test_lint_completion_offers_its_own_subcommands():
    script = run("grpo-lint", "completion", "zsh").stdout
    assert script.startswith("autoload -U +X bashcompinit && bashcompinit")
    probe = 'source /dev/stdin; COMP_WORDS=(grpo-lint ex); COMP_CWORD=1; _grpo_lint; echo "${COMPREPLY[@]}"'
    done = subprocess.run(["bash", "-c", probe], input=script.split("\n", 1)[1], capture_output=True, text=True)
    assert done.stdout.split() == ["explain"], done


@pytest.mark.parametrize("argv", [["grpo-lint", "rules"], ["grpo-render", "values/qwen3-235b.yaml"],
                                  ["grpo-data", "datasets"], ["grpo-eval", "--help"]])
def test_closed_pipe_ends_quietly(argv):
    """The reader is gone before the first write (`... | head -0`): no internal error, SIGPIPE's status."""
    proc = subprocess.Popen([str(BIN / argv[0]), *argv[1:]], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=REPO_ROOT)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    code = proc.wait(timeout=120)
    assert "bug in grpo-stack" not in err and "Traceback" not in err, err
    assert code in (0, 141), (code, err)


def test_clean_lint_on_a_terminal_counts_files(tmp_path):
    leader, follower = pty.openpty()
    env = {**os.environ, "GRPO_LINT_CACHE_DIR": str(tmp_path)}
    env.pop("NO_COLOR", None)
    env.pop("GITHUB_ACTIONS", None)
    files = [str(REPO_ROOT / "values" / f) for f in ("qwen3-235b.yaml", "qwen25-72b.yaml")]
    proc = subprocess.Popen([str(BIN / "grpo-lint"), "--select", "GRPO613", *files], stdout=follower,
                            stderr=subprocess.DEVNULL, env=env)
    os.close(follower)
    out = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    assert proc.wait(timeout=120) == 0
    assert "2 file(s) checked, no findings" in out.decode(), out
