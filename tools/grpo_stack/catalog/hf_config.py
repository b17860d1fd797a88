"""A Hugging Face config.json -> `global.job.model.shape` (what `grpo-lint --model-config` fills in)."""

from __future__ import annotations

import json
from typing import Any

from ..errors import InputError

# shape key -> the config.json keys that hold it, first found wins.
FIELDS = {
    "layers": ("num_hidden_layers", "n_layer", "num_layers"),
    "hidden": ("hidden_size", "n_embd", "d_model"),
    "heads": ("num_attention_heads", "n_head"),
    "vocab": ("vocab_size",),
    "maxPositions": ("max_position_embeddings", "n_positions", "max_sequence_length"),
}
EXPERTS = ("num_experts", "num_local_experts", "n_routed_experts")


def _first(config: dict[str, Any], keys: tuple[str, ...]) -> Any:
    for key in keys:
        if isinstance(config.get(key), int) and not isinstance(config.get(key), bool):
            return config[key]
    return None


MAX_CONFIG_BYTES = 1024 * 1024  # a Hugging Face config.json is a few KB


def shape_from_config(path: str) -> dict[str, int]:
    """The shape keys from config.json (a multimodal config's `text_config` when present)."""
    from ..filereader import read_text

    # Bounded like every other file option: a regular file of at most MAX_CONFIG_BYTES (never /dev/zero or a FIFO).
    text = read_text(path, max_bytes=MAX_CONFIG_BYTES)
    try:
        config = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(path, f"not a JSON config: {exc.msg}", line=exc.lineno, column=exc.colno) from None
    except RecursionError:
        raise InputError(path, "not a JSON config: nested too deeply") from None
    if not isinstance(config, dict):
        raise InputError(path, "not a Hugging Face config (top level is not an object)")
    config = config.get("text_config") if isinstance(config.get("text_config"), dict) else config
    shape: dict[str, int] = {}
    for key, names in FIELDS.items():
        value = _first(config, names)
        if value is None:
            raise InputError(path, f"no {' / '.join(names)}: cannot fill global.job.model.shape.{key}")
        shape[key] = value
    shape["kvHeads"] = _first(config, ("num_key_value_heads",)) or shape["heads"]
    experts = _first(config, EXPERTS) or 0
    shape["experts"] = experts
    ffn = _first(config, ("moe_intermediate_size",)) if experts else None
    shape["intermediate"] = ffn or _first(config, ("intermediate_size", "ffn_dim", "n_inner")) or 4 * shape["hidden"]
    head_dim = _first(config, ("head_dim",))
    if head_dim:
        shape["headDim"] = head_dim
    topk = _first(config, ("num_experts_per_tok",)) if experts else None
    if topk:
        shape["expertsPerToken"] = topk
    return shape


# Shape keys filled from config keys outside FIELDS (shape_from_config below them).
OTHER_FIELDS = {
    "kvHeads": ("num_key_value_heads", "num_attention_heads", "n_head"),
    "experts": EXPERTS,
    "intermediate": ("moe_intermediate_size", "intermediate_size", "ffn_dim", "n_inner"),
    "headDim": ("head_dim",),
    "expertsPerToken": ("num_experts_per_tok",),
}


def config_position(path: str, shape_key: str) -> tuple[int, int, str] | None:
    """(line, column, config key) in config.json of the key that filled `global.job.model.shape.<shape_key>`, so
    a finding about the shape points at the user's file; None when it cannot be found."""
    names = FIELDS.get(shape_key) or OTHER_FIELDS.get(shape_key) or ()
    from ..errors import InputError
    from ..filereader import read_text

    try:  # bounded like the read that filled the shape
        lines = read_text(path, max_bytes=MAX_CONFIG_BYTES).splitlines()
    except InputError:
        return None
    for name in names:
        for number, line in enumerate(lines, start=1):
            column = line.find(f'"{name}"')
            if column >= 0:
                return number, column + 1, name
    return None
