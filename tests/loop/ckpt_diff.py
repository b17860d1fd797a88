"""How far the actor's weights moved between two verl checkpoint steps (the loop venv; torch reads the shards).

    python ckpt_diff.py STEP_DIR_A STEP_DIR_B   -> JSON {"tensors": N, "changed": K, "max_abs_diff": X}
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def shard(step: Path):
    import torch

    files = sorted((step / "actor").glob("model_world_size_*_rank_0.pt"))
    assert len(files) == 1, files
    state = torch.load(files[0], map_location="cpu", weights_only=False)
    return {k: (v.to_local() if hasattr(v, "to_local") else v).float() for k, v in state.items()
            if hasattr(v, "shape")}


def main(argv: list[str]) -> int:
    a, b = shard(Path(argv[0])), shard(Path(argv[1]))
    assert a.keys() == b.keys()
    diffs = {k: (a[k] - b[k]).abs().max().item() for k in a}
    print(json.dumps({"tensors": len(diffs), "changed": sum(d > 0 for d in diffs.values()),
                      "max_abs_diff": max(diffs.values())}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
