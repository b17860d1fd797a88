"""Write catalog/verl_keys.json: every config key verl composes, from verl's own Hydra config.

Run with the Python that has verl installed (the oracle venv has verl 0.9.1):
    $ORACLE_VENV/bin/python tools/grpo_stack/catalog/extract_verl_keys.py > tools/grpo_stack/catalog/verl_keys.json
The oracle tier (tests/oracle/test_verl_keys_oracle.py) re-runs it and fails when the file differs.
"""

from __future__ import annotations

import json
import os
import sys

CONFIGS = ("ppo_trainer", "ppo_megatron_trainer")


def flatten(node, prefix: str, leaves: dict, open_maps: list) -> None:
    if isinstance(node, dict):
        if not node and prefix:
            open_maps.append(prefix)  # an empty map verl fills from overrides (engine_kwargs.vllm, ...)
            return
        for key, value in node.items():
            flatten(value, f"{prefix}.{key}" if prefix else str(key), leaves, open_maps)
    else:
        leaves[prefix] = type(node).__name__ if node is not None else "null"


def extract() -> dict:
    import verl
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    config_dir = os.path.join(os.path.dirname(verl.__file__), "trainer", "config")
    out = {
        "provenance": {
            "verl": verl.__version__,
            "source": "verl/trainer/config composed by Hydra (hydra.compose, no overrides), unresolved",
            "generator": "tools/grpo_stack/catalog/extract_verl_keys.py",
        },
        "configs": {},
    }
    for name in CONFIGS:
        with initialize_config_dir(config_dir=config_dir, version_base=None):
            cfg = compose(config_name=name)
        leaves: dict[str, str] = {}
        open_maps: list[str] = []
        flatten(OmegaConf.to_container(cfg, resolve=False), "", leaves, open_maps)
        out["configs"][name] = {"keys": dict(sorted(leaves.items())), "open_maps": sorted(open_maps)}
    return out


if __name__ == "__main__":
    import warnings

    warnings.filterwarnings("ignore")
    sys.stdout.write(json.dumps(extract(), indent=1, sort_keys=False) + "\n")
