"""The model shape a values file declares, compared with the staged config.json.

The declared shape comes from `global.job.model.shape` when the values give one, else from the preset through
the job spec's catalogue lookup; key spellings are read defensively so either form is understood."""

from __future__ import annotations

from typing import Any

# fact -> (spellings in values / the catalogue, keys in a Hugging Face config.json)
FACTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "layers": (("layers", "numLayers", "num_layers", "numHiddenLayers", "num_hidden_layers"),
               ("num_hidden_layers",)),
    "hidden": (("hidden", "hiddenSize", "hidden_size"), ("hidden_size",)),
    "heads": (("heads", "numHeads", "attentionHeads", "numAttentionHeads", "num_attention_heads"),
              ("num_attention_heads",)),
    "kvHeads": (("kvHeads", "numKvHeads", "numKeyValueHeads", "num_key_value_heads", "keyValueHeads"),
                ("num_key_value_heads",)),
    "experts": (("experts", "numExperts", "num_experts", "routedExperts"),
                ("num_experts", "n_routed_experts", "num_local_experts")),
    "expertsPerToken": (("expertsPerToken", "numExpertsPerTok", "num_experts_per_tok", "topK"),
                        ("num_experts_per_tok",)),
    "vocab": (("vocab", "vocabSize", "vocab_size"), ("vocab_size",)),
    "maxPositions": (("maxPositions", "maxPositionEmbeddings", "max_position_embeddings"),
                     ("max_position_embeddings",)),
}


def _pick(source: Any, names: tuple[str, ...]) -> Any:
    for n in names:
        value = source.get(n) if isinstance(source, dict) else getattr(source, n, None)
        if value is not None:
            return value
    return None


def declared(values: dict[str, Any]) -> tuple[dict[str, int], str]:
    """({fact: value}, where it came from) from merged values."""
    glob = values.get("global") or {}
    job = glob.get("job") or {}
    model = job.get("model") or {}
    if isinstance(model.get("shape"), dict) and model["shape"]:
        src, origin = model["shape"], "global.job.model.shape"
    else:
        from ..job.spec import Spec

        spec = Spec({"job": job, "cluster": glob.get("cluster") or {}, "storage": glob.get("storage") or {}})
        src, origin = spec.model, f"global.job.model.preset {model.get('preset')!r}"
    out = {}
    for fact, (names, _) in FACTS.items():
        value = _pick(src, names)
        if isinstance(value, int) and not isinstance(value, bool):
            out[fact] = value
    return out, origin


def mismatches(want: dict[str, int], config: dict[str, Any]) -> list[str]:
    text_config = config.get("text_config") if isinstance(config.get("text_config"), dict) else {}
    out = []
    for fact, value in want.items():
        keys = FACTS[fact][1]
        got = _pick(config, keys)
        if got is None:
            got = _pick(text_config, keys)
        if got is None and fact == "experts":
            got = 0  # a dense model's config has no expert count
        if got != value:
            out.append(f"{fact}: values declare {value}, config.json {keys[0]} = {got}")
    return out
