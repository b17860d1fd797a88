"""`grpo-eval merge`: a verl checkpoint (FSDP or Megatron) or a LoRA adapter -> a Hugging Face directory that vLLM
serves, with a provenance file naming the run it came from.

The conversion is verl's own model merger (`python -m verl.model_merger merge`) at the version the run trained with,
run in the interpreter that has verl installed (`--python`, the training image's in the cluster). verl's merger
writes a LoRA run's weights as base model + `lora_adapter/`; the adapter is checked against the values
(rank, alpha, target modules) and then folded into the weights with PEFT's merge_and_unload. The result appears at
the target only when complete (written to a `.<target>.*.partial` directory of its own, then renamed; a second
merge that finishes later finds the target taken and says so).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from . import provenance

FOLD = Path(__file__).with_name("fold_lora.py")


class MergeError(Exception):
    """The merge failed or was refused (exit 1)."""


def load_job(values_files: list[Path]) -> dict[str, Any]:
    """global.job of the layered values files, validated like grpo-render does (InputError on bad input)."""
    from ..errors import InputError
    from ..render import merged_values
    from ..values import load_values_file, merge_user_values, schema_violations, shape_errors, violation_errors

    files = [load_values_file(v) for v in values_files]
    user = merge_user_values(files)
    merged = merged_values(user)
    errors = shape_errors(files, user) or violation_errors(files, schema_violations(merged))
    if errors:
        raise errors[0]
    job = (merged.get("global") or {}).get("job")
    if not isinstance(job, dict):
        raise InputError(str(values_files[-1]), "global.job is required to know which run this is")
    return job


def default_paths(job: dict[str, Any], storage_root: Path, step: int) -> tuple[Path, Path]:
    """(verl checkpoint dir of the actor, merged output dir) where the chart's vllm.modelSubPath looks."""
    step_dir = storage_root / job["trainer"]["checkpointDir"] / f"global_step_{step}"
    return step_dir / "actor", step_dir / "merged"


def _run(cmd: list[str], what: str) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    if proc.returncode != 0:
        tail = " | ".join((proc.stderr or proc.stdout).strip().splitlines()[-3:])
        raise MergeError(f"{what} failed (exit {proc.returncode}): {tail}")


def merge(values_files: list[Path], step: int, storage_root: Path, python: str, checkpoint: Path | None = None,
          target: Path | None = None, adapter: Path | None = None, base: Path | None = None,
          allow_unverified: bool = False) -> Path:
    job = load_job(values_files)
    default_ckpt, default_target = default_paths(job, storage_root, step)
    target = target or default_target
    if target.exists():
        raise MergeError(f"{target} already exists; a merged model is never overwritten (remove it first)")
    target.parent.mkdir(parents=True, exist_ok=True)
    # A work directory of this merge's own: two merges into one target never share (or delete) each other's.
    work = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".partial"))
    try:
        if adapter is not None:
            base = base or storage_root / job["model"]["path"]
            info, verified = _checked_adapter(adapter, job, allow_unverified)
            out = work / "model"
            _run([python, str(FOLD), str(base), str(adapter), str(out)], "folding the LoRA adapter")
            source = {"kind": "lora-adapter", "adapter": str(adapter), "base": str(base), "step": step}
        else:
            checkpoint = checkpoint or default_ckpt
            if not (checkpoint / "huggingface").is_dir() and not (checkpoint / "model" / "huggingface").is_dir():
                raise MergeError(f"{checkpoint}: not a verl checkpoint (no huggingface/ config beside the shards)")
            converted = work / "verl"
            _run([python, "-m", "verl.model_merger", "merge", "--backend", job["backend"],
                  "--local_dir", str(checkpoint), "--target_dir", str(converted)], "verl's model merger")
            info, verified, out = None, True, converted
            lora_dir = converted / "lora_adapter"
            if lora_dir.is_dir():
                info, verified = _checked_adapter(lora_dir, job, allow_unverified)
                out = work / "model"
                _run([python, str(FOLD), str(converted), str(lora_dir), str(out)], "folding the LoRA adapter")
            elif int(job["lora"]["rank"]) > 0:
                raise MergeError(f"{checkpoint}: the values train LoRA rank {job['lora']['rank']} but verl's merger "
                                 "found no adapter in the checkpoint; is this the right run?")
            source = {"kind": f"verl-{job['backend']}", "checkpoint": str(checkpoint), "step": step}
        source["merger"] = _verl_version(python)
        provenance.write(out, job, values_files, source, info, verified)
        try:
            out.rename(target)
        except OSError as exc:  # another merge into the same target finished first
            raise MergeError(f"{target}: cannot move the merged model into place ({exc.strerror or exc}); "
                             "a merged model is never overwritten") from None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


def _checked_adapter(adapter: Path, job: dict[str, Any], allow_unverified: bool) -> tuple[dict | None, bool]:
    try:
        return provenance.check_adapter(adapter, job), True
    except provenance.AdapterMismatch as exc:
        if not allow_unverified:
            raise MergeError(f"{exc} (--allow-unverified merges it anyway)") from None
        print(f"grpo-eval merge: WARNING unverified adapter: {exc}", file=sys.stderr)
        try:
            return provenance.read_adapter_config(adapter), False
        except provenance.AdapterMismatch:
            return None, False  # unreadable config: PEFT refuses it while folding, with its own error


def _verl_version(python: str) -> str:
    proc = subprocess.run([python, "-c", "import verl; print(verl.__version__)"], capture_output=True, text=True)
    return f"verl {proc.stdout.strip()}" if proc.returncode == 0 else "verl not importable (adapter fold only)"
