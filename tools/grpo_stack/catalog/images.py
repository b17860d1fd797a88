"""The Ray images this repository builds (images/), with what each carries.

The framework version and the rollout engine of a run are facts of the image, not values: `global.job.framework`
selects the catalogued image, grpo-lint GRPO330 checks `raycluster.image` / `raycluster.rayVersion` name it, and
the builder and the batch rules read the version from here. tests/job/test_image_catalog.py checks every row
against its Dockerfile and requirements.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FrameworkImage:
    framework: str
    version: str  # the framework's version inside the image
    rollout_engine: str  # the inference engine the framework rolls out with
    rollout_engine_version: str
    ray_version: str  # = raycluster.rayVersion
    repository: str  # default repository name (push it to your registry)
    tag: str  # the tag images/README.md builds
    dockerfile: str
    source: str  # where the version facts are pinned


IMAGES: dict[str, FrameworkImage] = {
    "verl": FrameworkImage(
        framework="verl", version="0.9.1", rollout_engine="vllm", rollout_engine_version="0.24.0",
        ray_version="2.53.0", repository="grpo-stack/verl", tag="0.9.1-ray2.53.0-r2",
        dockerfile="images/verl/Dockerfile",
        source="images/verl/requirements.txt (verl==0.9.1, ray==2.53.0); FROM vllm/vllm-openai:v0.24.0",
    ),
    "miles": FrameworkImage(
        framework="miles", version="dec268f7", rollout_engine="sglang", rollout_engine_version="bundled",
        ray_version="2.56.1", repository="grpo-stack/miles", tag="dec268f7-ray2.56.1-r1",
        dockerfile="images/miles/Dockerfile",
        source="images/miles/Dockerfile FROM radixark/miles:dev-202607310056 (miles dec268f7, SGLang, Ray 2.56.1)",
    ),
}


def image_for(framework: str) -> FrameworkImage | None:
    return IMAGES.get(framework)
