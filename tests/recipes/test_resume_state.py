"""Where a run starts, decided from the checkpoint directory before submitting (grpo_stack.job.resume): every
tracker state the in-pod submit can meet. Fail closed: what cannot be read is "unknown", never "fresh"."""

from __future__ import annotations

import os

import pytest
from grpo_stack.job.resume import TRACKER, resume_state


def ckpt(tmp_path, tracker=None, dirs=()):
    root = tmp_path / "ckpt"
    root.mkdir()
    for d in dirs:
        (root / d).mkdir()
    if tracker is not None:
        (root / TRACKER).write_bytes(tracker)
    return root


@pytest.mark.parametrize("framework, step_dir", [("verl", "global_step_7"), ("miles", "iter_0000007")])
def test_resume_from_the_tracker_step(tmp_path, framework, step_dir):
    root = ckpt(tmp_path, b"7\n", [step_dir])
    s = resume_state(framework, str(root), "auto", None)
    assert (s.kind, s.step) == ("resume", 7)
    assert s.line() == f"resumes from step 7 in {root}"


@pytest.mark.parametrize("content, why", [
    (b"", "holds ''"),
    (b"-1", "not a step number"),
    (b"7.5", "not a step number"),
    (b"nan", "not a step number"),
    (b"release", "not a step number"),
    (b"9" * 200, "holds 200 bytes"),
    (b"\xff\xfe", "not a step number"),
])
def test_unreadable_tracker_is_unknown(tmp_path, content, why):
    root = ckpt(tmp_path, content, ["global_step_7"])
    s = resume_state("verl", str(root), "auto", None)
    assert s.kind == "unknown" and why in s.detail


def test_fifo_tracker_does_not_block(tmp_path):
    root = ckpt(tmp_path)
    os.mkfifo(root / TRACKER)
    s = resume_state("miles", str(root), "auto", None)
    assert s.kind == "unknown" and "not a regular file" in s.detail


def test_step_directories_without_tracker_are_unknown(tmp_path):
    """verl would print "tracker file does not exist" and train from step 0 over them."""
    root = ckpt(tmp_path, None, ["global_step_3", "global_step_10"])
    s = resume_state("verl", str(root), "auto", None)
    assert s.kind == "unknown" and "global_step_" in s.detail


def test_tracker_naming_a_missing_step_is_unknown(tmp_path):
    """verl's find_latest_ckpt_path returns None for it and starts from scratch."""
    root = ckpt(tmp_path, b"12", ["global_step_7"])
    assert resume_state("verl", str(root), "auto", None).kind == "unknown"


def test_fresh_when_nothing_is_there(tmp_path):
    assert resume_state("verl", str(tmp_path / "none"), "auto", None).kind == "fresh"
    assert resume_state("miles", str(ckpt(tmp_path)), "auto", None).kind == "fresh"


@pytest.mark.parametrize("framework, tracker, dirs, held", [
    ("miles", b"garbage", ["iter_0000001"], "iter_0000001"),
    ("verl", None, ["global_step_9", "global_step_10", "global_step_100"], "global_step_100 and 2 more"),
    ("verl", b"5", [], TRACKER),
])
def test_disable_over_an_earlier_run_is_flagged(tmp_path, framework, tracker, dirs, held):
    """resume.mode disable starts at step 0: where an earlier run's checkpoints are, its saves would overwrite them
    one by one, so the state is `overwrite` (the submit refuses it unless told), naming the newest step."""
    root = ckpt(tmp_path, tracker, dirs)
    s = resume_state(framework, str(root), "disable", None)
    assert s.kind == "overwrite" and f"already holds {held}" in s.detail


def test_disable_in_an_empty_or_missing_directory_is_fresh(tmp_path):
    assert resume_state("verl", str(ckpt(tmp_path)), "disable", None).kind == "fresh"
    assert resume_state("miles", str(tmp_path / "none"), "disable", None).kind == "fresh"


def test_from_path(tmp_path):
    root = ckpt(tmp_path, b"4", ["global_step_4", "iter_0000004"])
    verl = resume_state("verl", "/x", "fromPath", str(root / "global_step_4"))
    assert (verl.kind, verl.step) == ("resume", 4)
    assert resume_state("verl", "/x", "fromPath", str(root)).kind == "unknown"  # not a global_step_N dir
    assert resume_state("verl", "/x", "fromPath", str(root / "global_step_9")).kind == "unknown"
    assert resume_state("miles", "/x", "fromPath", str(root)).step == 4
    assert resume_state("miles", "/x", "fromPath", str(tmp_path / "nowhere")).kind == "unknown"


def verl_step(root, step: int, world_size: int, ranks: int | None = None):
    actor = root / f"global_step_{step}" / "actor"
    actor.mkdir(parents=True)
    for rank in range(world_size if ranks is None else ranks):
        (actor / f"model_world_size_{world_size}_rank_{rank}.pt").write_bytes(b"")
    (actor / "huggingface").mkdir()
    return actor


def test_verl_checkpoint_names_the_world_size_that_wrote_it(tmp_path):
    """verl's FSDP shards are model_world_size_<W>_rank_<r>.pt (verl/utils/checkpoint/fsdp_checkpoint_manager.py)."""
    root = ckpt(tmp_path, b"4\n")
    verl_step(root, 4, 2)
    s = resume_state("verl", str(root), "auto", None)
    assert (s.kind, s.step, s.world_size) == ("resume", 4, 2)
    assert s.step_path("verl") == str(root / "global_step_4")


def test_from_path_reads_the_named_steps_world_size(tmp_path):
    root = ckpt(tmp_path)
    verl_step(root, 3, 8)
    s = resume_state("verl", str(root / "global_step_3"), "fromPath", str(root / "global_step_3"))
    assert (s.kind, s.world_size) == ("resume", 8)


@pytest.mark.parametrize("layout", ["megatron", "mixed", "empty"])
def test_world_size_unknown_when_the_files_do_not_say(tmp_path, layout):
    """Megatron's distributed checkpoint reshards on load; a step holding two sizes or none says nothing."""
    root = ckpt(tmp_path, b"5\n")
    actor = root / "global_step_5" / "actor"
    actor.mkdir(parents=True)
    if layout == "megatron":
        (actor / "dist_ckpt").mkdir()
    elif layout == "mixed":
        (actor / "model_world_size_1_rank_0.pt").write_bytes(b"")
        (actor / "model_world_size_2_rank_0.pt").write_bytes(b"")
    s = resume_state("verl", str(root), "auto", None)
    assert (s.kind, s.world_size) == ("resume", None)
