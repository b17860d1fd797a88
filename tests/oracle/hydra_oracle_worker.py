"""Hydra read-back oracle worker. Runs INSIDE the oracle venv (hydra-core and omegaconf as verl 0.9.1 pins them).

Protocol: one JSON case per stdin line, one JSON result per stdout line, in order.
  in:  {"id": str, "overrides": [str, ...], "config_name": str (optional), "read": [key, ...] (optional),
        "env": {name: value} (optional, set before reading, e.g. a probe HF_TOKEN an interpolation would leak)}
  out: {"id", "parsed": [{"key", "type", "sweep", "value"} | {"error"}], "composed": {key: value} | null,
        "compose_error": str | null}

"parsed": each override through Hydra's own `OverridesParser`, then applied to an empty config as Hydra applies
overrides and resolved by OmegaConf, as verl's code reads `config.trainer.experiment_name`. With "config_name",
the overrides are also composed into verl's real config and the "read" keys returned resolved.
"""

from __future__ import annotations

import json
import os
import sys
import warnings

MAX_MESSAGE = 2000


def _plain(value):
    from omegaconf import DictConfig, ListConfig, OmegaConf

    if isinstance(value, DictConfig | ListConfig):
        return OmegaConf.to_container(value, resolve=True)
    return value


def _parse(parser, loader, text: str) -> dict:
    from omegaconf import OmegaConf

    try:
        override = parser.parse_override(text)
        config = OmegaConf.create({})
        loader._apply_overrides_to_config([override], config)
        value = _plain(OmegaConf.select(config, override.key_or_group, throw_on_resolution_failure=True))
    except Exception as exc:  # noqa: BLE001 -- the verdict is the answer
        return {"error": f"{type(exc).__name__}: {str(exc)[:MAX_MESSAGE]}"}
    return {"key": override.key_or_group, "type": override.type.name, "sweep": override.is_sweep_override(),
            "value": value}


def main() -> None:
    warnings.filterwarnings("ignore")
    from hydra._internal.config_loader_impl import ConfigLoaderImpl
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parser = OverridesParser.create()
    config_dir = None
    for line in sys.stdin:
        case = json.loads(line)
        out = {"id": case["id"], "parsed": [], "composed": None, "compose_error": None}
        os.environ.update(case.get("env", {}))
        for text in case["overrides"]:
            out["parsed"].append(_parse(parser, ConfigLoaderImpl, text))
        if case.get("config_name"):
            try:
                from hydra import compose, initialize_config_dir
                from omegaconf import OmegaConf

                if config_dir is None:
                    import verl

                    config_dir = os.path.join(os.path.dirname(verl.__file__), "trainer", "config")
                with initialize_config_dir(config_dir=config_dir, version_base=None):
                    cfg = compose(config_name=case["config_name"], overrides=case["overrides"])
                out["composed"] = {k: _plain(OmegaConf.select(cfg, k)) for k in case.get("read", [])}
            except Exception as exc:  # noqa: BLE001
                out["compose_error"] = f"{type(exc).__name__}: {str(exc)[:MAX_MESSAGE]}"
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
