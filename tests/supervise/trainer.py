"""A stand-in for the driver, for the supervisor's loop tests only: it writes checkpoints in verl's layout
(global_step_<N>/actor/, latest_checkpointed_iteration.txt) and verl's console step lines, and misbehaves as told.
The real verl trainer under supervision is the loop tier's (tests/loop); here the loop's bookkeeping is tested.

    python trainer.py CHECKPOINT_DIR TOTAL BEHAVIOUR     BEHAVIOUR: ok | kill@N | exit0@N | restart
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

TRACKER = "latest_checkpointed_iteration.txt"


def main(root: Path, total: int, behaviour: str) -> None:
    tracker = root / TRACKER
    start = 0 if behaviour == "restart" or not tracker.exists() else int(tracker.read_text())
    print(f"Total training steps: {total}", flush=True)
    print(f"step:{start} - val-core/gsm8k/reward/mean@1:0.25", flush=True)  # val_before_train
    for step in range(start + 1, total + 1):
        if behaviour == f"kill@{step}":
            os.kill(os.getpid(), signal.SIGKILL)  # mid-step, before its checkpoint: as a lost node leaves it
        print(f"step:{step} - actor/pg_loss:0.0{step} - critic/score/mean:0.5", flush=True)
        (root / f"global_step_{step}" / "actor").mkdir(parents=True, exist_ok=True)
        tmp = root / f".{TRACKER}.tmp"
        tmp.write_text(str(step))
        os.replace(tmp, tracker)
        if behaviour == f"exit0@{step}":
            return


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3])
