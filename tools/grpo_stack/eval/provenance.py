"""Which run a merged model came from: the provenance file `grpo-eval merge` writes beside the weights, and the
adapter check that keeps the wrong adapter from being merged at all.

The evaluation release refuses a model whose provenance `run` differs from its own run identity (the vllm chart's
`vllm.runIdentity` renders the same object from the release values; tests/eval checks the two agree).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from ..errors import InputError

PROVENANCE = "grpo-provenance.json"
FORMAT = 1
# What `targetModules: all-linear` resolves to on the catalogued models (Qwen2/2.5/3, Llama 3, MoE experts use
# the same projection names): every linear layer of attention and MLP, never lm_head.
ALL_LINEAR = frozenset({"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"})


class AdapterMismatch(Exception):
    """The adapter is not the one the values describe (exit 1 unless --allow-unverified)."""


def run_identity(job: dict[str, Any]) -> dict[str, Any]:
    """The fields that name a run: the checkpoint tree, the base model and the LoRA shape (null: full
    fine-tuning, global.job.lora unset)."""
    lora = job.get("lora")
    shape = ({"rank": int(lora["rank"]), "alpha": int(lora["alpha"]), "targetModules": lora["targetModules"]}
             if lora else None)
    return {"experiment": job["trainer"]["experiment"], "checkpointDir": job["trainer"]["checkpointDir"],
            "modelPath": job["model"]["path"], "framework": job["framework"], "backend": job["backend"],
            "lora": shape}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_adapter_config(adapter_dir: Path) -> dict[str, Any]:
    """adapter_config.json; a file that is there but is no adapter config is bad input (InputError, exit 2),
    never a mismatch (exit 1, which --allow-unverified lets through)."""
    path = adapter_dir / "adapter_config.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise AdapterMismatch(f"{path}: no adapter_config.json") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(str(path), f"unreadable adapter config: {exc}") from None
    except RecursionError:
        raise InputError(str(path), "unreadable adapter config: JSON nested too deeply") from None
    if not isinstance(data, dict):
        raise InputError(str(path), "not an adapter config (top level is not an object)")
    for key, kinds in (("r", (int,)), ("lora_alpha", (int, float)), ("target_modules", (str, list))):
        value = data.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, kinds)):
            raise InputError(str(path), f"{key}: {value!r:.60} is not a {' or '.join(k.__name__ for k in kinds)}",
                             key_path=key)
    return data


def adapter_targets(config: dict[str, Any]) -> frozenset[str] | str:
    t = config.get("target_modules")
    if isinstance(t, str):
        return t
    return frozenset(str(x).rsplit(".", 1)[-1] for x in t or [])


def check_adapter(adapter_dir: Path, job: dict[str, Any]) -> dict[str, Any]:
    """Raises AdapterMismatch unless adapter_config.json has the values' rank, alpha and target modules."""
    config = read_adapter_config(adapter_dir)
    lora = job.get("lora")
    where = adapter_dir / "adapter_config.json"
    if not lora:
        raise AdapterMismatch(f"{where}: the values train without LoRA (global.job.lora is unset), yet there is "
                              "an adapter")
    problems = []
    if config.get("r") != lora["rank"]:
        problems.append(f"r {config.get('r')!r} != global.job.lora.rank {lora['rank']}")
    if config.get("lora_alpha") != lora["alpha"]:
        problems.append(f"lora_alpha {config.get('lora_alpha')!r} != global.job.lora.alpha {lora['alpha']}")
    want = lora["targetModules"]
    got = adapter_targets(config)
    expected = ALL_LINEAR if want == "all-linear" else frozenset(m.strip() for m in want.split(","))
    if got != want and got != expected:
        shown = sorted(got) if isinstance(got, frozenset) else got
        problems.append(f"target_modules {shown} != global.job.lora.targetModules {want!r}")
    if problems:
        raise AdapterMismatch(f"{where}: " + "; ".join(problems))
    return {"r": config.get("r"), "lora_alpha": config.get("lora_alpha"),
            "target_modules": sorted(got) if isinstance(got, frozenset) else got}


def write(target: Path, job: dict[str, Any], values_files: list[Path], source: dict[str, Any],
          adapter: dict[str, Any] | None, verified: bool) -> Path:
    doc = {"format": FORMAT, "run": run_identity(job), "source": source,
           "values": [{"file": str(p), "sha256": sha256(p)} for p in values_files],
           "adapter": adapter, "adapterVerified": verified}
    path = target / PROVENANCE
    path.write_text(json.dumps(doc, indent=2) + "\n")
    return path
