"""GRPO330 framework-image."""

from __future__ import annotations

from collections.abc import Iterator

from ...catalog.images import image_for
from ..finding import Hit, Severity

CODE = "GRPO330"
NAME = "framework-image"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "The Ray image is not the one this repository builds for global.job.framework (version unknown)."
DOC = """## What it does
`global.job.framework` selects one image of the catalogue (`tools/grpo_stack/catalog/images.py`, built from
`images/`): verl 0.9.1 with vLLM, or miles dec268f7 with SGLang. The builder and the batch rules assume that
image's framework version. This rule checks `raycluster.image.tag` is that image's tag and
`raycluster.rayVersion` its Ray version.

## Why is this bad?
The predecessor accepted `frameworkVersion: 0.8.0` while its image carried verl 0.9.1: the command and the
batch rules were written for one version and ran on another. A miles image under `framework: verl` (or the
reverse) fails at the first import; a Ray version that differs from the image's makes KubeRay start the
wrong `ray` CLI flags.

## Example
```yaml
global:
  job:
    framework: miles
raycluster:
  image: {repository: grpo-stack/verl, tag: 0.9.1-ray2.53.0-r2}
```
Use instead:
```yaml
global:
  job:
    framework: miles
raycluster:
  rayVersion: "2.56.1"
  image: {repository: grpo-stack/miles, tag: dec268f7-ray2.56.1-r1}
```

## Fix
Build the framework's image from `images/` (images/README.md) and set `raycluster.image.tag` and
`raycluster.rayVersion` in your values file to the catalogued tag and Ray version.
"""


def check(ctx) -> Iterator[Hit]:
    if not ctx.has_values:
        return
    framework = ctx.get("global.job.framework")
    image = image_for(framework) if isinstance(framework, str) else None
    if image is None:
        return
    tag = ctx.get("raycluster.image.tag")
    if tag != image.tag:
        yield Hit("raycluster.image.tag",
                  f"framework {framework} runs on {image.repository}:{image.tag} ({framework} {image.version}, "
                  f"{image.rollout_engine}; {image.dockerfile}), not tag {tag!r}: the framework version is unknown",
                  remediation=f"set raycluster.image.tag: {image.tag} in your values file",
                  related=("global.job.framework",))
    ray = ctx.get("raycluster.rayVersion")
    if ray != image.ray_version:
        yield Hit("raycluster.rayVersion",
                  f"{image.repository}:{image.tag} carries Ray {image.ray_version}, not {ray!r}",
                  remediation=f'set raycluster.rayVersion: "{image.ray_version}" in your values file',
                  related=("global.job.framework",))
