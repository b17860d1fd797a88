"""The image catalogue states what images/ really builds: the framework version the builder and the batch rules
assume must be the one pinned in the image (the predecessor's values said 0.8.0 while the image carried 0.9.1)."""

from __future__ import annotations

import re

import pytest
import yaml
from grpo_stack.catalog.images import IMAGES
from grpo_stack.paths import REPO_ROOT, SUBCHART_DIR


@pytest.mark.parametrize("framework", sorted(IMAGES))
def test_dockerfile_builds_the_catalogued_tag(framework):
    image = IMAGES[framework]
    text = (REPO_ROOT / image.dockerfile).read_text()
    assert f"{image.repository}:{image.tag}" in text, "the build command in the Dockerfile names another tag"
    assert f"ray{image.ray_version}" in image.tag


def test_verl_image_pins_the_catalogued_versions():
    image = IMAGES["verl"]
    pins = (REPO_ROOT / "images" / "verl" / "requirements.txt").read_text()
    assert re.search(rf"^verl(\[[\w,-]+\])?=={re.escape(image.version)}$", pins, re.M)
    assert re.search(rf"^ray\[default\]=={re.escape(image.ray_version)}$", pins, re.M)
    dockerfile = (REPO_ROOT / image.dockerfile).read_text()
    assert f"FROM vllm/vllm-openai:v{image.rollout_engine_version}" in dockerfile
    assert image.rollout_engine == "vllm"


def test_chart_default_image_is_the_verl_image():
    """raycluster's defaults are the verl image: a verl values file that sets no image gets a catalogued one."""
    defaults = yaml.safe_load((SUBCHART_DIR / "raycluster" / "values.yaml").read_text())
    assert defaults["image"]["tag"] == IMAGES["verl"].tag
    assert defaults["rayVersion"] == IMAGES["verl"].ray_version
