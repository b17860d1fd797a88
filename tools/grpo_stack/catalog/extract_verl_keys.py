"""Write catalog/verl_keys.json: every config key verl composes, from verl's own Hydra config, and the type verl's
config dataclasses declare for each key under a `_target_` section (what OmegaConf's structured merge, verl's
omega_conf_to_dataclass, accepts there).

Run with the Python that has verl installed (the oracle venv has verl 0.9.1):
    $ORACLE_VENV/bin/python tools/grpo_stack/catalog/extract_verl_keys.py > tools/grpo_stack/catalog/verl_keys.json
The oracle tier (tests/oracle/test_verl_keys_oracle.py) re-runs it and fails when the file differs.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

# The package's own stdlib reader of the catalogue: what a value must be for each declared kind.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from grpo_stack.catalog.verl_keys import fits  # noqa: E402

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


def accepted(hint) -> list[str] | None:
    """The value kinds a dataclass field of type `hint` takes: int, float, bool, str, null, list, dict; None when
    the type is anything else (Any, an enum, a class), which the catalogue then leaves unchecked."""
    import types
    import typing

    origin = typing.get_origin(hint)
    if hint is type(None):
        return ["null"]
    if hint in (int, float, bool, str):
        return [hint.__name__]
    if hint in (list, tuple) or origin in (list, tuple):
        return ["list"]
    if hint is dict or origin is dict:
        return ["dict"]
    if origin in (typing.Union, types.UnionType):
        kinds: set[str] = set()
        for member in typing.get_args(hint):
            sub = accepted(member)
            if sub is None:
                return None
            kinds.update(sub)
        return sorted(kinds)
    return None


def field_types(container: dict) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Dotted key -> the kinds verl's dataclass declares for it, for every leaf of a section with `_target_`, in two
    maps: sections OmegaConf can structure (verl's omega_conf_to_dataclass merges and converts values there) and
    sections it cannot, which verl instantiates with the values as given. A key whose composed default its own
    declaration refuses is left out (the declaration is not what verl runs with)."""
    import dataclasses
    import typing

    from hydra.utils import get_class
    from omegaconf import OmegaConf

    converted: dict[str, list[str]] = {}
    as_given: dict[str, list[str]] = {}

    def walk(node, prefix: str) -> None:
        if not isinstance(node, dict):
            return
        target, cls, hints, base = node.get("_target_"), None, {}, None
        if isinstance(target, str):
            try:
                cls = get_class(target)
                hints = typing.get_type_hints(cls) if dataclasses.is_dataclass(cls) else {}
            except Exception:  # noqa: BLE001 - no class to read: its keys stay unchecked
                hints = {}
            try:
                base = OmegaConf.structured(cls)
            except Exception:  # noqa: BLE001 - verl instantiates it from the values as given
                base = None
        for key, value in node.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            if isinstance(value, dict):
                walk(value, path)
                continue
            kinds = accepted(hints[key]) if key in hints and key != "_target_" else None
            if kinds is None or (isinstance(value, str) and "${" in value):
                continue
            if base is not None:
                try:
                    OmegaConf.merge(base, {key: value})
                except Exception:  # noqa: BLE001 - verl's own default does not fit its declaration
                    continue
                converted[path] = kinds
            elif any(fits(value, kind, coerced=False) for kind in kinds):
                as_given[path] = kinds

    walk(container, "")
    return dict(sorted(converted.items())), dict(sorted(as_given.items()))


# What every run sets and the defaults leave open (`???` or refused by verl's checks); the builder always sets
# both. Used only to build the sections in kept_as_given, never in the catalogue's keys.
BUILD_OVERRIDES = ("actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1", "actor_rollout_ref.rollout.name=vllm")


def kept_as_given(container: dict, declared: dict[str, list[str]]) -> dict[str, list[str]]:
    """The keys of `declared` where verl, building the section the way its workers do (omega_conf_to_dataclass
    without a dataclass type: hydra's instantiate), keeps a value of another type as given or refuses it. A key
    whose value verl replaces (a field its __post_init__ derives) is left out: any value works there. So is a key
    whose section does not build from the defaults alone (nothing to tell)."""
    from omegaconf import OmegaConf, open_dict
    from verl.utils.config import omega_conf_to_dataclass

    resolved = OmegaConf.create(container)
    builds: dict[str, bool] = {}
    out = {}
    for key, kinds in declared.items():
        prefix, _, name = key.rpartition(".")
        if prefix not in builds:
            try:
                omega_conf_to_dataclass(OmegaConf.select(resolved, prefix))
                builds[prefix] = True
            except Exception:  # noqa: BLE001 - the section needs more than its defaults
                builds[prefix] = False
        if not builds[prefix]:
            continue
        text = "not-a-" + "-".join(kinds)
        changed = resolved.copy()
        with open_dict(changed):
            OmegaConf.update(changed, key, text, force_add=True)
        try:
            kept = getattr(omega_conf_to_dataclass(OmegaConf.select(changed, prefix)), name) == text
        except Exception:  # noqa: BLE001 - refused while building: the declared type holds
            kept = True
        if kept:
            out[key] = kinds
    return out


# Sections verl hands to another library's dataclass as keyword arguments, unconverted (a string stays a string):
# verl/models/mcore/config_converter.py updates the TransformerConfig arguments with override_transformer_config.
PASSED_TO = {"megatron.override_transformer_config": "megatron.core.transformer.TransformerConfig"}


def passed_to(keys: dict, open_maps: list) -> dict[str, dict]:
    """Section prefix -> {class, fields: name -> kinds} for every section of PASSED_TO the config has."""
    import typing

    from hydra.utils import get_class

    prefixes = {k.rpartition(".")[0] for k in keys} | set(keys) | set(open_maps)
    out = {}
    for prefix in sorted(prefixes):
        for suffix, target in PASSED_TO.items():
            if prefix == suffix or prefix.endswith("." + suffix):
                hints = typing.get_type_hints(get_class(target))
                fields = {name: kinds for name, hint in sorted(hints.items())
                          if not name.startswith("_") and (kinds := accepted(hint)) is not None}
                out[prefix] = {"class": target, "fields": fields}
    return out


def extract() -> dict:
    import verl
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    config_dir = os.path.join(os.path.dirname(verl.__file__), "trainer", "config")
    out = {
        "provenance": {
            "verl": verl.__version__,
            "source": "verl/trainer/config composed by Hydra (hydra.compose, no overrides), unresolved; field_types: "
                      "the type hints of each section's `_target_` dataclass",
            "generator": "tools/grpo_stack/catalog/extract_verl_keys.py",
        },
        "configs": {},
    }
    for name in CONFIGS:
        with initialize_config_dir(config_dir=config_dir, version_base=None):
            cfg = compose(config_name=name)
        leaves: dict[str, str] = {}
        open_maps: list[str] = []
        container = OmegaConf.to_container(cfg, resolve=False)
        flatten(container, "", leaves, open_maps)
        converted, as_given = field_types(container)
        with initialize_config_dir(config_dir=config_dir, version_base=None):
            buildable = compose(config_name=name, overrides=list(BUILD_OVERRIDES))
        as_given = kept_as_given(OmegaConf.to_container(buildable, resolve=False), as_given)
        out["configs"][name] = {"keys": dict(sorted(leaves.items())), "open_maps": sorted(open_maps),
                                "field_types": converted, "field_types_as_given": as_given,
                                "passed_to": passed_to(leaves, open_maps)}
    return out


if __name__ == "__main__":
    import warnings

    warnings.filterwarnings("ignore")
    sys.stdout.write(json.dumps(extract(), indent=1, sort_keys=False) + "\n")
