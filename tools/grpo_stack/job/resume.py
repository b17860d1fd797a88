"""Where a run starts, read from the checkpoint directory before anything is submitted. Fail closed: a tracker that
cannot be read means "cannot tell", never "fresh".

Both frameworks keep the step to resume from in `latest_checkpointed_iteration.txt` under the checkpoint root:
verl (verl/utils/checkpoint/checkpoint_manager.py get_checkpoint_tracker_filename; the step's directory is
global_step_<N>) and Megatron, which miles saves through (megatron/training/checkpointing.py
get_checkpoint_tracker_filename; iter_<N:07d>). Stdlib only.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass

TRACKER = "latest_checkpointed_iteration.txt"
STEP_DIR = {"verl": (re.compile(r"^global_step_(\d+)$"), "global_step_{}"),
            "miles": (re.compile(r"^iter_(\d{7})$"), "iter_{:07d}")}
MAX_TRACKER_BYTES = 64
# verl's FSDP checkpoint manager writes one shard per rank, named for the world size that wrote it, and loads the
# shard named for the world size it runs on (verl/utils/checkpoint/fsdp_checkpoint_manager.py:
# model_world_size_{world_size}_rank_{rank}.pt): another world size finds no file, hours of start-up later
# (verl issue 2265). The submit compares the two before anything starts.
VERL_SHARD = re.compile(r"^model_world_size_(\d+)_rank_(\d+)\.pt$")


@dataclass(frozen=True)
class ResumeState:
    kind: str  # fresh | resume | unknown | overwrite (fresh over an earlier run's checkpoints)
    directory: str
    step: int | None = None
    detail: str = ""
    world_size: int | None = None  # the ranks that wrote the checkpoint resumed from, where its files say

    def step_path(self, framework: str) -> str | None:
        """The step directory this run resumes from (fromPath names it; auto reads it from the tracker)."""
        if self.kind != "resume" or self.step is None:
            return None
        _, fmt = STEP_DIR[framework]
        if os.path.basename(self.directory.rstrip("/")) == fmt.format(self.step):
            return self.directory
        return os.path.join(self.directory, fmt.format(self.step))

    def line(self) -> str:
        if self.kind == "resume":
            return f"resumes from step {self.step} in {self.directory}"
        if self.kind == "fresh":
            return f"starts fresh ({self.detail})"
        if self.kind == "overwrite":
            return f"would start fresh over an earlier run's checkpoints ({self.detail})"
        return f"cannot tell ({self.detail})"


def read_tracker(path: str) -> tuple[int | None, str]:
    """(step, problem). Never blocks on a FIFO and never reads more than a few bytes."""
    text, problem = tracker_text(path)
    if problem:
        return None, problem
    if not re.fullmatch(r"\d{1,12}", text):
        return None, f"{path} holds {text[:20]!r}, not a step number"
    return int(text), ""


def tracker_text(path: str) -> tuple[str, str]:
    """(stripped content, problem) of a tracker file; problem "missing" when it does not exist."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return "", "missing"
    except OSError as exc:
        return "", f"{path}: {exc.strerror or exc}"
    if not stat.S_ISREG(st.st_mode):
        return "", f"{path} is not a regular file"
    if st.st_size > MAX_TRACKER_BYTES:
        return "", f"{path} holds {st.st_size} bytes, not a step number"
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_TRACKER_BYTES)
    except OSError as exc:
        return "", f"{path}: {exc.strerror or exc}"
    return raw.decode("ascii", errors="replace").strip(), ""


def step_dirs(directory: str, framework: str) -> list[str]:
    pattern, _ = STEP_DIR[framework]
    try:
        return [e for e in os.listdir(directory) if pattern.match(e)]
    except OSError:
        return []


def from_root(directory: str, framework: str, mode: str) -> ResumeState:
    """The state of a checkpoint root the framework resumes from by itself (resume mode auto)."""
    if not os.path.exists(directory):
        return ResumeState("fresh", directory, detail=f"no checkpoint directory {directory} yet")
    if not os.access(directory, os.R_OK | os.X_OK):
        return ResumeState("unknown", directory, detail=f"{directory} is not readable")
    step, problem = read_tracker(os.path.join(directory, TRACKER))
    if problem == "missing":
        found = step_dirs(directory, framework)
        if found:
            return ResumeState("unknown", directory, detail=f"{directory} holds {sorted(found)[-1]} but no {TRACKER}")
        return ResumeState("fresh", directory, detail=f"no checkpoint in {directory}")
    if step is None:
        return ResumeState("unknown", directory, detail=problem)
    _, fmt = STEP_DIR[framework]
    if not os.path.isdir(os.path.join(directory, fmt.format(step))):
        return ResumeState("unknown", directory, detail=f"{TRACKER} says step {step} but "
                                                        f"{os.path.join(directory, fmt.format(step))} is missing")
    return ResumeState("resume", directory, step=step)


def saved_world_size(step_path: str) -> int | None:
    """The world size whose ranks wrote a verl FSDP checkpoint step (its actor/ shard names); None when its files
    do not say (no FSDP shards: Megatron's distributed checkpoint, an empty or unreadable directory)."""
    try:
        names = os.listdir(os.path.join(step_path, "actor"))
    except OSError:
        return None
    sizes = {int(m.group(1)) for m in map(VERL_SHARD.match, names) if m}
    return sizes.pop() if len(sizes) == 1 else None


def resume_state(framework: str, checkpoint_dir: str, mode: str, path: str | None) -> ResumeState:
    state = _resume_state(framework, checkpoint_dir, mode, path)
    if framework == "verl" and (where := state.step_path(framework)) is not None:
        size = saved_world_size(where)
        if size is not None:
            state = ResumeState(state.kind, state.directory, state.step, state.detail, size)
    return state


def _resume_state(framework: str, checkpoint_dir: str, mode: str, path: str | None) -> ResumeState:
    if mode == "disable":
        # Step 0 again in a directory that holds another run's steps: its saves overwrite them step by step, and
        # a later `auto` resume would mix the two runs. The submit refuses unless told to overwrite.
        found = sorted(step_dirs(checkpoint_dir, framework), key=lambda d: int(d.rsplit("_", 1)[1]))
        if found or os.path.lexists(os.path.join(checkpoint_dir, TRACKER)):
            held = f"{found[-1]} and {len(found) - 1} more" if len(found) > 1 else (found or [TRACKER])[0]
            return ResumeState("overwrite", checkpoint_dir,
                               detail=f"resume.mode: disable; {checkpoint_dir} already holds {held}")
        return ResumeState("fresh", checkpoint_dir, detail="resume.mode: disable")
    if mode == "fromPath":
        assert path is not None
        if framework == "verl":  # verl resumes from one global_step_<N> directory
            m = STEP_DIR["verl"][0].match(os.path.basename(path.rstrip("/")))
            if not m:
                return ResumeState("unknown", path, detail=f"resume.path {path} is not a global_step_<N> directory")
            if not os.path.isdir(path):
                return ResumeState("unknown", path, detail=f"resume.path {path} does not exist")
            return ResumeState("resume", path, step=int(m.group(1)))
        state = from_root(path, framework, mode)
        if state.kind != "resume":
            return ResumeState("unknown", path, detail=f"resume.path: {state.detail}")
        return state
    return from_root(checkpoint_dir, framework, mode)


def start_refusal(state: ResumeState, framework: str, world_size: int, shape: str, overwrite_ok: bool) -> str | None:
    """Why a run must not start from `state` (the submit refuses it, before the first attempt and before every
    resubmission), or None."""
    if state.kind == "unknown":
        return (f"cannot tell where the run would start ({state.detail}). Fix or remove the tracker, or set "
                "global.job.resume.mode: disable (start fresh) or fromPath (resume from a named checkpoint)")
    if state.world_size is not None and state.world_size != world_size:
        return (f"{state.step_path(framework)} was written by {state.world_size} ranks (world size "
                f"{state.world_size}) but the values ask for {shape} (world size {world_size}): verl's FSDP "
                "checkpoints load only onto the world size that wrote them (one shard per rank, verl issue 2265). "
                f"Resume with global.cluster back at {state.world_size} GPUs in all, or start a new run (a new "
                "global.job.trainer.checkpointDir) from a model merged out of that checkpoint")
    if state.kind == "overwrite" and not overwrite_ok:
        return (f"{state.directory} holds an earlier run's checkpoints and resume.mode: disable would start at step 0 "
                "and overwrite them. Set global.job.resume.mode: auto to continue that run, point "
                "global.job.trainer.checkpointDir at a new directory, or pass --overwrite-checkpoints")
    return None
