"""verl 0.9.1's config keys (catalog/verl_keys.json, generated from verl's own Hydra config by
extract_verl_keys.py; the oracle tier proves the file equals what verl composes). Stdlib only: the builder
checks job.verl.overrides against it inside the head pod."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

DATA = Path(__file__).with_name("verl_keys.json")


@cache
def catalogue() -> dict:
    return json.loads(DATA.read_text(encoding="utf-8"))


def keys(config_name: str) -> dict[str, str]:
    """Dotted key -> type name of its default, for `ppo_trainer` or `ppo_megatron_trainer`."""
    return catalogue()["configs"][config_name]["keys"]


def open_map(config_name: str, key: str) -> str | None:
    """The empty map `key` falls under (verl reads any key there, e.g. rollout.engine_kwargs.vllm), or None."""
    for prefix in catalogue()["configs"][config_name]["open_maps"]:
        if key.startswith(prefix + "."):
            return prefix
    return None


def version() -> str:
    return catalogue()["provenance"]["verl"]
