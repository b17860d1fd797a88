"""A RayJob manifest whose entrypoint runs verl's trainer -> the memory model's Run, where the manifest states the
facts: the Hydra overrides of `python3 -m verl.trainer.main_ppo`, the GPU instance type its workers select
(`node.kubernetes.io/instance-type`) and a model the catalogue knows by its path's last component (the Hugging
Face name, e.g. `/fsx/models/Qwen3-8B`). Anything missing: no Run (the model is not guessed)."""

from __future__ import annotations

import posixpath
import shlex
from typing import Any

from ..catalog.instances import gpu_memory_mib, lookup
from ..catalog.models import MODELS
from .arch import from_shape
from .model import Run
from .resolve import MIB, verl_run

TRAINER = "verl.trainer.main_ppo"
INSTANCE_TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")


def _scalar(text: str) -> Any:
    """A Hydra override value as verl reads it: true/false, numbers, else the string (quotes removed)."""
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text.strip("'\"")


def overrides(entrypoint: str) -> tuple[dict[str, Any], bool] | None:
    """({key: value}, megatron) of a verl trainer command line, or None when it runs no verl trainer."""
    try:
        words = shlex.split(entrypoint, comments=False)
    except ValueError:
        return None
    if TRAINER not in words:
        return None
    out: dict[str, Any] = {}
    megatron = False
    for word in words[words.index(TRAINER) + 1:]:
        if word.startswith("--config-name"):
            megatron = "megatron" in word
        elif "=" in word and not word.startswith("-"):
            key, _, value = word.partition("=")
            out[key.lstrip("+~")] = _scalar(value)
    return out, megatron


def _instance_type(spec: dict) -> str | None:
    for group in spec.get("workerGroupSpecs") or []:
        pod = ((group or {}).get("template") or {}).get("spec") or {}
        selector = pod.get("nodeSelector") if isinstance(pod.get("nodeSelector"), dict) else {}
        found = next((str(selector[k]) for k in INSTANCE_TYPE_LABELS if selector.get(k)), None)
        if found:
            return found
    return None


def _model(path: Any):
    name = posixpath.basename(str(path).rstrip("/")).lower() if path else ""
    return next((m for m in MODELS.values() if m.hf_id.split("/")[-1].lower() == name), None)


def rayjob_run(obj: dict) -> Run | None:
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    entry = spec.get("entrypoint")
    parsed = overrides(entry) if isinstance(entry, str) else None
    if parsed is None:
        return None
    values, megatron = parsed
    instance = _instance_type(spec.get("rayClusterSpec") or {})
    mib = gpu_memory_mib(instance) if instance else None
    model = _model(values.get("actor_rollout_ref.model.path"))
    if not mib or model is None:
        return None
    node = lookup(instance)
    return verl_run(from_shape(model), values, megatron, mib * MIB, node.allocatable_memory_mib * MIB if node else None)
