"""GRPO616 by confidence on an image without CUDA: an error where no CUDA program can run at all (no glibc or no
Python), a warning naming the assumption on a glibc base or Ray's CPU image (PyPI's torch wheels bring their own
CUDA runtime), nothing where the container's own command installs such wheels. Where the check stops: the verdict
reads the stated image and command; no image is pulled here."""

from __future__ import annotations

import pytest

from tests.lint.fixtures import gpu_job, severities


@pytest.mark.parametrize("image, command, want", [
    ("busybox:1.36", '["sh", "-c", "cp /src/w.bin /dst/"]', ["error"]),
    ("alpine:3.20", '["sh", "-c", "pip install torch==2.5.1 && python t.py"]', ["error"]),
    ("python:3.11-slim", '["python", "/app/score.py"]', ["warning"]),
    ("rayproject/ray:2.40.0-py312", '["python", "-m", "probe"]', ["warning"]),
    ("python:3.11-slim", '["sh", "-c", "pip install torch==2.5.1 && python t.py"]', []),
    ("ubuntu:22.04", '["bash", "-c", "pip3 install -r /app/requirements.txt && python3 /app/t.py"]', []),
    ("rayproject/ray:2.40.0-py312-gpu", '["python", "-m", "probe"]', []),
])
def test_severity_follows_what_the_image_can_run(tmp_path, image, command, want):
    assert severities(tmp_path, gpu_job(command, image=image), "GRPO616") == want
