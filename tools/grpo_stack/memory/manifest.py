"""A RayJob manifest whose entrypoint runs verl's or miles' trainer -> the memory model's Run, where the manifest
states the facts: the Hydra overrides of `python3 -m verl.trainer.main_ppo`, or the arguments of miles'
`train.py` / `train_async.py` (its GPUs and nodes from `--actor-num-nodes`, `--actor-num-gpus-per-node` and, when
not colocated, `--rollout-num-gpus`); the GPU instance type its workers select (`node.kubernetes.io/instance-type`)
and the model: for miles the Megatron model arguments its command spells (`--num-layers`, `--hidden-size`,
`--num-attention-heads`, `--vocab-size` and the rest of MODEL_ARGS: arch.from_megatron_args), else, as for verl, a
model the catalogue knows by its path's last component (verl `actor_rollout_ref.model.path`, miles
`--hf-checkpoint`: the Hugging Face name, e.g. `/fsx/models/Qwen3-8B`). Anything missing: no Run (the model is not
guessed)."""

from __future__ import annotations

import posixpath
import shlex
from typing import Any

from ..catalog.instances import gpu_memory_mib, lookup
from ..catalog.models import MODELS
from .arch import from_megatron_args, from_shape
from .model import Run
from .resolve import MIB, argv_options, miles_run, verl_run

TRAINER = "verl.trainer.main_ppo"
MILES_SCRIPTS = ("train.py", "train_async.py")  # miles' entry points (radixark/miles repository root)
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


def miles_arguments(entrypoint: str) -> dict[str, Any] | None:
    """{key: value} of a miles trainer command line (bare flags True), or None when it runs no miles trainer."""
    try:
        words = shlex.split(entrypoint, comments=False)
    except ValueError:
        return None
    script = next((i for i, w in enumerate(words) if posixpath.basename(w) in MILES_SCRIPTS), None)
    if script is None or "--hf-checkpoint" not in words[script + 1:]:
        return None
    return argv_options(words[script + 1:])


def _miles_nodes(args: dict[str, Any]) -> int | None:
    """Nodes a miles run occupies: the actor's when colocated, plus the rollout GPUs' nodes otherwise (None when
    the command does not say how many rollout GPUs)."""
    actor, per_node = args.get("actor-num-nodes", 1), args.get("actor-num-gpus-per-node", 8)
    if not (isinstance(actor, int) and isinstance(per_node, int)) or actor < 1 or per_node < 1:
        return None
    if args.get("colocate") is True:
        return actor
    rollout = args.get("rollout-num-gpus")
    return actor + -(-rollout // per_node) if isinstance(rollout, int) and rollout > 0 else None


def rayjob_run(obj: dict) -> Run | None:
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    entry = spec.get("entrypoint")
    if not isinstance(entry, str):
        return None
    instance = _instance_type(spec.get("rayClusterSpec") or {})
    mib = gpu_memory_mib(instance) if instance else None
    if not mib:
        return None
    node = lookup(instance)
    ram = node.allocatable_memory_mib * MIB if node else None
    parsed = overrides(entry)
    if parsed is not None:
        values, megatron = parsed
        model = _model(values.get("actor_rollout_ref.model.path"))
        return None if model is None else verl_run(from_shape(model), values, megatron, mib * MIB, ram)
    args = miles_arguments(entry)
    if args is None:
        return None
    # The command's own model arguments are what Megatron builds; a catalogued checkpoint name stands in for
    # them when the command leaves them out.
    model, nodes = _model(args.get("hf-checkpoint")), _miles_nodes(args)
    arch = from_megatron_args(args) or (from_shape(model) if model else None)
    if arch is None or nodes is None:
        return None
    return miles_run(arch, args, nodes, mib * MIB, ram)
