"""grpo-lint tests never read or write the user's result cache: each test gets its own, empty one."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _private_lint_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("GRPO_LINT_CACHE_DIR", str(tmp_path_factory.mktemp("lint-cache")))
