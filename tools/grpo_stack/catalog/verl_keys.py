"""verl 0.9.1's config keys and the types verl declares for them (catalog/verl_keys.json, generated from verl's own
Hydra config and config dataclasses by extract_verl_keys.py; the oracle tier proves the file equals what verl
composes, and that type_refusal agrees with OmegaConf's structured merge). Stdlib only: the builder checks
job.verl.overrides against it inside the head pod."""

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


# How each declared kind is taken. `coerced`: the value passes through OmegaConf's structured merge (verl's
# omega_conf_to_dataclass), which converts a string "3" to an int field, 1 to a bool field, and so on; else the
# value reaches the declaring class unconverted (a string stays a string).
_BOOL_WORDS = frozenset(("y", "yes", "on", "true", "n", "no", "off", "false"))


def _parses(text: str, convert: type) -> bool:
    """Whether Python's int() or float() reads `text`, as OmegaConf's conversion does."""
    try:
        convert(text)
    except ValueError:
        return False
    return True


def fits(value: object, kind: str, coerced: bool) -> bool:
    """Whether `value` is taken as `kind` (coerced: through OmegaConf's conversion, else as given)."""
    if kind == "null":
        return value is None
    if kind == "list":
        return isinstance(value, list)
    if kind == "dict":
        return isinstance(value, dict)
    if isinstance(value, bool):
        return kind == "bool" or (coerced and kind == "str")
    if kind == "int":
        return isinstance(value, int) or (coerced and isinstance(value, str) and _parses(value, int))
    if kind == "float":
        return isinstance(value, int | float) or (coerced and isinstance(value, str) and _parses(value, float))
    if kind == "bool":
        return coerced and (isinstance(value, int) or (isinstance(value, str) and (
            _parses(value, int) or value.lower() in _BOOL_WORDS)))
    if kind == "str":
        return isinstance(value, str) or (coerced and isinstance(value, int | float))
    return True


def declared(config_name: str, key: str) -> tuple[list[str], str, bool] | None:
    """What verl declares for `key`: (kinds, by whom, coerced), or None when nothing declares a type for it."""
    config = catalogue()["configs"][config_name]
    kinds = config.get("field_types", {}).get(key)
    if kinds:
        return kinds, "verl's config dataclass", True
    kinds = config.get("field_types_as_given", {}).get(key)
    if kinds:
        return kinds, "verl's config dataclass", False
    prefix, _, name = key.rpartition(".")
    section = config.get("passed_to", {}).get(prefix)
    if section and name in section["fields"]:
        return section["fields"][name], section["class"], False
    return None


def type_refusal(config_name: str, key: str, value: object) -> str | None:
    """Why `value` cannot be `key` by the type verl (or the class it hands the section to) declares; None when
    it can, or when no type is declared."""
    found = declared(config_name, key)
    if found is None:
        return None
    kinds, by, coerced = found
    if any(fits(value, kind, coerced) for kind in kinds):
        return None
    shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
    how = "OmegaConf refuses it when verl builds the config" if coerced else "verl passes it on as given"
    return f"{shown} is not {' | '.join(kinds)}, the type declared for it by {by} (verl {version()}: {how})"
