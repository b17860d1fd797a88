"""Shell hygiene: shellcheck on every shell script in the repository, `bash -n` on every script the chart
embeds in a manifest (review 000: a comment swallowed a line continuation in the vLLM invocation)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SKIP_DIRS = {".git", ".venv", ".venv-oracle", ".venv-startup", "node_modules", "out", "__pycache__", ".pytest_cache",
             ".ruff_cache", ".hypothesis"}
SHELLS = ("bash", "sh")
REPO_ROOT = Path(__file__).resolve().parents[2]


def _walk(root: Path):
    for p in sorted(root.iterdir()) if root.is_dir() else []:
        if p.is_dir() and not p.is_symlink():
            if p.name not in SKIP_DIRS:
                yield from _walk(p)
        elif p.is_file():
            yield p


def _has_shell_shebang(path: Path) -> bool:
    try:
        first = path.open("rb").readline(200).decode("utf-8", "replace")
    except OSError:
        return False
    return first.startswith("#!") and any(first.rstrip().endswith(s) or f"/{s} " in first or f" {s} " in first
                                          for s in SHELLS)


def shell_scripts() -> list[Path]:
    found = {p for p in _walk(REPO_ROOT) if p.suffix == ".sh"}
    for sub in ("recipes", ".ci"):
        found |= {p for p in _walk(REPO_ROOT / sub) if _has_shell_shebang(p)}
    return sorted(found)


SCRIPTS = shell_scripts()


def test_ci_entry_point_is_checked():
    """The walk must find something: .ci/run is a bash script."""
    assert REPO_ROOT / ".ci" / "run" in SCRIPTS


@pytest.mark.parametrize("script", SCRIPTS, ids=[str(p.relative_to(REPO_ROOT)) for p in SCRIPTS])
def test_shellcheck(script):
    shellcheck = Path(sys.executable).with_name("shellcheck")
    proc = subprocess.run([str(shellcheck), "-x", "-f", "gcc", str(script)], check=False, capture_output=True,
                          text=True, cwd=script.parent, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _embedded_scripts(rendered) -> list[tuple[str, str]]:
    out = []
    for o in rendered.objects:
        for c in _containers(o.obj):
            argv = [*(c.get("command") or []), *(c.get("args") or [])]
            for i, word in enumerate(argv[:-1]):
                if Path(word).name in SHELLS and argv[i + 1] == "-c" and i + 2 < len(argv):
                    out.append((f"{o.kind}/{o.name}/{c['name']}", argv[i + 2]))
    return out


def _containers(obj: dict) -> list[dict]:
    spec = obj.get("spec") or {}
    templates = []
    if obj.get("kind") == "Pod":
        templates = [spec]
    elif "template" in spec:
        templates = [(spec["template"].get("spec") or {})]
    elif obj.get("kind") == "RayCluster":
        groups = [spec.get("headGroupSpec") or {}, *(spec.get("workerGroupSpecs") or [])]
        templates = [(g.get("template") or {}).get("spec") or {} for g in groups]
    return [c for t in templates for c in (t.get("initContainers") or []) + (t.get("containers") or [])]


# The evaluation release of a shipped file (values/eval/eval.yaml on top): the lm-eval Job's script.
EVAL_RELEASE = {"global.components.raycluster": False, "global.components.sandboxFusion": False,
                "global.components.rewardService": False, "global.components.fsxUtils": False,
                "global.components.vllm": True, "global.components.lmEval": True}


def test_embedded_scripts_are_found(render_values):
    """The scan below is not vacuous: the evaluation release renders the lm-eval Job's bash -c script."""
    assert _embedded_scripts(render_values("qwen3-8b", EVAL_RELEASE))


@pytest.mark.parametrize("release", ["training", "evaluation"])
def test_embedded_shell_scripts_parse(values_name, release, rendered_all, render_values):
    rendered = rendered_all[values_name] if release == "training" else render_values(values_name, EVAL_RELEASE)
    scripts = _embedded_scripts(rendered)
    bad = []
    for where, script in scripts:
        proc = subprocess.run(["bash", "-n", "-c", script], check=False, capture_output=True, text=True, timeout=30)
        if proc.returncode:
            bad.append(f"{where}: {proc.stderr.strip()}")
    assert not bad, "\n".join(bad)
