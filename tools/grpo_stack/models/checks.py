"""Every check a staged model directory must pass before a run may read it."""

from __future__ import annotations

import json
from pathlib import Path

from . import safetensors_check

MANIFEST = "grpo-model-manifest.json"
IGNORED_DIRS = (".cache",)  # huggingface_hub's local_dir bookkeeping
TOKENIZER_SETS = (("tokenizer.json",), ("tokenizer.model",), ("vocab.json", "merges.txt"))


def model_files(root: Path) -> list[str]:
    """Relative paths of every regular file except the manifest and hub bookkeeping, sorted."""
    out = []
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root)
        if rel.parts[0] in IGNORED_DIRS or rel.as_posix() == MANIFEST or not p.is_file():
            continue
        if len(rel.parts) == 1 and rel.name.startswith(f".{MANIFEST}.") and rel.name.endswith(".partial"):
            continue  # a manifest being written (manifest.write)
        out.append(rel.as_posix())
    return out


def _json(path: Path) -> tuple[object | None, str | None]:
    try:
        return json.loads(path.read_text(encoding="utf-8")), None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return None, f"not valid JSON ({exc})"
    except RecursionError:
        return None, "not valid JSON (nested too deeply)"


def check_dir(root: Path) -> dict[str, list[str]]:
    """{relative path: problems}; an empty dict means the directory is a usable model."""
    bad: dict[str, list[str]] = {}
    files = model_files(root)
    shards = [f for f in files if f.endswith(".safetensors")]
    if not shards:
        bad["*.safetensors"] = ["no safetensors weights"]
    tensors: dict[str, set[str]] = {}
    for rel in shards:
        problems, names = safetensors_check.check(root / rel)
        tensors[rel] = names
        if problems:
            bad[rel] = problems
    index = root / "model.safetensors.index.json"
    if index.exists():
        data, err = _json(index)
        weight_map = data.get("weight_map") if isinstance(data, dict) else None
        if err or not isinstance(weight_map, dict):
            bad["model.safetensors.index.json"] = [err or "no weight_map"]
        else:
            for tensor, shard in sorted(weight_map.items()):
                if shard not in tensors:
                    bad.setdefault("model.safetensors.index.json", []).append(f"{tensor}: shard {shard} missing")
                elif shard not in bad and tensor not in tensors[shard]:
                    bad.setdefault(shard, []).append(f"lacks tensor {tensor} named by the index")
    config, err = _json(root / "config.json") if (root / "config.json").exists() else (None, "missing")
    if err:
        bad["config.json"] = [err]
    elif not isinstance(config, dict) or "model_type" not in config:
        bad["config.json"] = ["no model_type: not a Hugging Face model config"]
    if not any(all((root / f).is_file() for f in group) for group in TOKENIZER_SETS):
        bad["tokenizer"] = ["no tokenizer.json, tokenizer.model or vocab.json + merges.txt"]
    for name in ("tokenizer.json", "tokenizer_config.json", "generation_config.json"):
        if (root / name).exists():
            _, err = _json(root / name)
            if err:
                bad[name] = [err]
    return bad
