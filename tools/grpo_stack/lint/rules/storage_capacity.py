"""GRPO614 storage-capacity."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator

from ..finding import Hit, Severity

CODE = "GRPO614"
NAME = "storage-capacity"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = ("The model, the retained checkpoints and a data margin do not fit the filesystem's free space "
           "(global.storage.capacity less .used; unstated: the smallest FSx for Lustre file system).")
DOC = """## What it does
Estimates what the run writes to the shared filesystem and compares it with the free space:
`global.storage.capacity` less `global.storage.used` (what the filesystem already holds: other runs' models,
data and checkpoints; `lfs df -h`). The estimate:

- the model weights: parameters x 2 bytes (bf16), at `job.model.path`;
- each checkpoint: full fine-tuning saves weights (2 bytes) and Adam state with fp32 master weights (12 bytes)
  per parameter; LoRA saves the adapters and their Adam state (rank x (in + out) per targeted matrix of every
  layer and expert, 14 bytes per adapter parameter);
- how many checkpoints stay: `trainer.keepCheckpoints` (verl), else every save of the run (miles:
  numRollout / saveFreq); verl without retention keeps every checkpoint, so the run's length bounds it;
- a 10% margin for the data files and logs.

Parameters come from the preset's sourced count or are estimated from `model.shape`.

Unstated capacity is checked too: no FSx for Lustre file system is smaller than 1200 GiB (the smallest SSD
size; larger ones come in steps of 2400 GiB), so a run that needs more than that, less `used`, is a warning until
the capacity is stated. `grpo-lint --cluster` reads both from the live filesystem instead. A stated capacity
that is too small is an error.

## Why is this bad?
The miles review's run hit ENOSPC part-way through writing a 53 GB checkpoint: hours of GPU time lost and a
half-written checkpoint that the next resume trips over.

## Example
```yaml
global:
  storage:
    capacity: 1200Gi
  job:
    trainer:
      saveFreq: 10
      keepCheckpoints: 20
```
Use instead:
```yaml
global:
  storage:
    capacity: 1200Gi
  job:
    trainer:
      saveFreq: 10
      keepCheckpoints: 3
```

## Fix
Keep fewer checkpoints (`trainer.keepCheckpoints`), save less often, free space, or grow the filesystem; state
`global.storage.capacity` and `global.storage.used` for the filesystem the run uses (docs/troubleshooting.md:
ENOSPC, and one full Lustre OST).
"""

UNITS = {"": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40,
         "m": 1e-3}
QUANTITY = re.compile(r"^([0-9]+(?:\.[0-9]+)?)(m|Ki|Mi|Gi|Ti|k|M|G|T)?$")
GIB = 2**30


def quantity_bytes(text: str) -> float | None:
    found = QUANTITY.match(text)
    return float(found.group(1)) * UNITS[found.group(2) or ""] if found else None


def lora_parameters(model, rank: int) -> float:
    """Adapter parameters for LoRA on every linear layer: rank x (in + out) per matrix, per expert."""
    h = model.hidden_size
    ffn = model.intermediate_size or 4 * h
    attention = 4 * (h + h)  # q, k, v, o (GQA makes k/v smaller: an upper bound)
    mlp = 3 * (h + ffn) * max(1, model.num_experts)
    return model.num_layers * rank * (attention + mlp)


def estimate(ctx) -> tuple[float, str] | None:
    spec = ctx.spec
    if spec is None:
        return None
    model = spec.model
    params = model.parameters
    lora = spec.opt("lora")
    per_ckpt = lora_parameters(model, int(lora["rank"])) * 14 if lora else params * 14
    trainer = spec.get("trainer")
    keep = trainer.get("keepCheckpoints")
    save = int(trainer["saveFreq"])
    if save <= 0:
        count, why = 0, "saveFreq -1: no checkpoints"
    elif keep:
        count, why = int(keep), f"keepCheckpoints {keep}"
    elif spec.get("framework") == "miles":
        count = math.ceil(int(spec.get("miles.numRollout")) / save)
        why = f"numRollout {spec.get('miles.numRollout')} / saveFreq {save}"
    else:
        count, why = 1, "verl keeps every checkpoint (no keepCheckpoints): at least one, more as the run goes"
    weights = params * 2
    total = (weights + count * per_ckpt) * 1.1
    text = (f"model {weights / GIB:,.0f} GiB + {count} checkpoint(s) x {per_ckpt / GIB:,.0f} GiB ({why}) "
            f"+ 10% = {total / GIB:,.0f} GiB")
    return total, text


# AWS FSx CreateFileSystem StorageCapacity: SSD file systems are 1200 GiB, 2400 GiB, then steps of 2400 GiB.
SMALLEST_FSX = 1200 * GIB


def check(ctx) -> Iterator[Hit]:
    if not ctx.has_values:
        return
    capacity = ctx.get("global.storage.capacity")
    used_text = ctx.get("global.storage.used")
    used = quantity_bytes(used_text) if isinstance(used_text, str) else 0.0
    found = estimate(ctx)
    if found is None or used is None:
        return
    need, text = found
    held = f" less {used_text} already used" if used else ""
    if not isinstance(capacity, str):
        if need > SMALLEST_FSX - used:
            yield Hit("global.storage.used" if used else "global.storage.capacity",
                      f"the run needs about {text}, more than the smallest FSx for Lustre file system (1200 GiB"
                      f"{held}) holds, and global.storage.capacity is not stated", severity=Severity.WARNING,
                      remediation="state global.storage.capacity (and .used) for the filesystem the run uses, or "
                      "check it live with grpo-lint --cluster")
        return
    have = quantity_bytes(capacity)
    if have is None:
        return
    if need > have - used:
        yield Hit("global.storage.used" if used and need <= have else "global.storage.capacity",
                  f"the run needs about {text}; capacity {capacity}{held} leaves "
                  f"{max(have - used, 0) / GIB:,.0f} GiB", related=("global.job.trainer.keepCheckpoints",
                                                                     "global.storage.used"))
    elif ctx.get("global.job.framework") == "verl" and not ctx.get("global.job.trainer.keepCheckpoints") \
            and int(ctx.get("global.job.trainer.saveFreq", -1)) > 0:
        yield Hit("global.job.trainer.saveFreq", f"verl keeps every checkpoint ({text} for the first); without "
                  "trainer.keepCheckpoints the filesystem fills as the run goes", severity=Severity.WARNING,
                  remediation="set global.job.trainer.keepCheckpoints in your values file")
