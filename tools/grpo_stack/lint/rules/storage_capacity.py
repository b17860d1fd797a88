"""GRPO614 storage-capacity."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator

from ..finding import Hit, Severity

CODE = "GRPO614"
NAME = "storage-capacity"
SEVERITY = Severity.ERROR
SUMMARY = "The model, the retained checkpoints and a data margin do not fit global.storage.capacity."
DOC = """## What it does
When `global.storage.capacity` is set, estimates what the run writes to the shared filesystem and compares:

- the model weights: parameters x 2 bytes (bf16), at `job.model.path`;
- each checkpoint: full fine-tuning saves weights (2 bytes) and Adam state with fp32 master weights (12 bytes)
  per parameter; LoRA saves the adapters and their Adam state (rank x (in + out) per targeted matrix of every
  layer and expert, 14 bytes per adapter parameter);
- how many checkpoints stay: `trainer.keepCheckpoints` (verl), else every save of the run (miles:
  numRollout / saveFreq); verl without retention keeps every checkpoint, so the run's length bounds it;
- a 10% margin for the data files and logs.

Parameters come from the preset's sourced count or are estimated from `model.shape`.

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
Keep fewer checkpoints (`trainer.keepCheckpoints`), save less often, or grow the filesystem.
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


def check(ctx) -> Iterator[Hit]:
    if not ctx.has_values:
        return
    capacity = ctx.get("global.storage.capacity")
    if not isinstance(capacity, str):
        return
    have = quantity_bytes(capacity)
    found = estimate(ctx)
    if have is None or found is None:
        return
    need, text = found
    if need > have:
        yield Hit("global.storage.capacity", f"the run needs about {text}; capacity {capacity} is "
                  f"{have / GIB:,.0f} GiB", related=("global.job.trainer.keepCheckpoints",))
    elif ctx.get("global.job.framework") == "verl" and not ctx.get("global.job.trainer.keepCheckpoints") \
            and int(ctx.get("global.job.trainer.saveFreq", -1)) > 0:
        yield Hit("global.job.trainer.saveFreq", f"verl keeps every checkpoint ({text} for the first); without "
                  "trainer.keepCheckpoints the filesystem fills as the run goes", severity=Severity.WARNING,
                  remediation="set global.job.trainer.keepCheckpoints in your values file")
