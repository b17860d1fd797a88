"""GRPO617 by confidence on manifests: a multi-GPU container without a memory-backed /dev/shm is an error where
its command starts GPU peers (a distributed launcher, a model server), a warning naming the assumption for any
other program (one process may drive its GPUs and need none of it). Where the check stops: the verdict reads the
stated command; no container runs here."""

from __future__ import annotations

from tests.lint.fixtures import gpu_job, severities


def test_a_launcher_without_dev_shm_is_an_error(tmp_path):
    command = '["torchrun", "--nproc_per_node=4", "train.py"]'
    assert severities(tmp_path, gpu_job(command, gpus=4), "GRPO617") == ["error"]


def test_a_single_program_without_dev_shm_is_a_warning(tmp_path):
    command = '["python", "evaluate.py", "--device-map", "auto"]'
    assert severities(tmp_path, gpu_job(command, gpus=4), "GRPO617") == ["warning"]
