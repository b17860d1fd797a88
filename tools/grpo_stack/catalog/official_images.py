"""Docker Official Images by name (catalog/docker_official_images.json, the `library/` listing of
docker-library/official-images at the commit the file names)."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

DATA = Path(__file__).with_name("docker_official_images.json")


@lru_cache(maxsize=1)
def names() -> frozenset[str]:
    return frozenset(json.loads(DATA.read_text(encoding="utf-8"))["images"])
