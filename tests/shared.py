"""Where the shared reference material lies: ../shared beside the clone (CI's layout); GRPO_SHARED_DIR moves it."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def shared_dir() -> Path:
    return Path(os.environ.get("GRPO_SHARED_DIR") or REPO_ROOT / ".." / "shared").resolve()
