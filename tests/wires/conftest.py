"""The reward service's harness and test sandbox (tests/reward) for the wire tests, on loopback."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
for path in (REPO / "images" / "reward-service", REPO / "tests" / "reward"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
