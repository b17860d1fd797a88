"""The step phases a consumer reads as a class, by the names each framework times them (a step record's phases are
verl's `timing_s/<phase>` or miles' `perf/<timer>_time`)."""

from __future__ import annotations

# verl: marked_timer("save_checkpoint") in ray_trainer.py; miles: `@timer def save_model` on its Megatron and FSDP
# actors (backends/*/actor.py), logged with the next rollout's timings
CHECKPOINT = ("save_checkpoint", "save_model")
# verl: marked_timer("testing"); miles evaluates in its rollout manager, outside the timers it logs
VALIDATION = ("testing",)
# both: verl's marked_timer("update_weights"), miles' `@timer def update_weights`
WEIGHT_SYNC = ("update_weights",)
