"""The stand-in driver of the supervised-submit tests, run by the stand-in `verl.trainer.main_ppo` on the real Ray
head: it reads the checkpoint directory from the builder's own `trainer.default_local_dir=`, resumes from verl's
tracker when `trainer.resume_mode=auto`, states its total as verl does, logs verl's console step lines, saves
global_step_<N>/ and the tracker after each step, and misbehaves as the next line of <dir>/../behaviours says
(consumed one per attempt): ok | kill@N | exit0@N | restart | fail@N.
"""

import os
import signal
import sys
from pathlib import Path

TOTAL = 4
args = dict(a.split("=", 1) for a in sys.argv[1:] if "=" in a)
root = Path(args["trainer.default_local_dir"])
root.mkdir(parents=True, exist_ok=True)
script = root.parent / "behaviours"
lines = script.read_text().splitlines() if script.exists() else []
behaviour = lines[0] if lines else "ok"
script.write_text("\n".join(lines[1:]) + "\n")
tracker = root / "latest_checkpointed_iteration.txt"
resume = args.get("trainer.resume_mode") == "auto" and tracker.exists() and behaviour != "restart"
start = int(tracker.read_text()) if resume else 0
print(f"Total training steps: {TOTAL}", flush=True)
print(f"step:{start} - val-core/gsm8k/reward/mean@1:0.25", flush=True)  # val_before_train
for step in range(start + 1, TOTAL + 1):
    if behaviour == f"kill@{step}":
        os.kill(os.getpid(), signal.SIGKILL)
    if behaviour == f"fail@{step}":
        sys.exit(7)
    print(f"step:{step} - actor/pg_loss:0.1 - critic/score/mean:0.5", flush=True)
    (root / f"global_step_{step}" / "actor").mkdir(parents=True, exist_ok=True)
    tracker.write_text(str(step))
    if behaviour == f"exit0@{step}":
        sys.exit(0)
sys.exit(0)
