"""GRPO330 framework-image."""

from __future__ import annotations

from collections.abc import Iterator

from ...catalog.images import image_for
from ..finding import Hit, Severity
from .image_pinning import split

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

A digest is read by the tag your values write beside it (`grpo-images` writes both into `images.lock.yaml`):
`tag: 0.9.1-ray2.53.0-r2` with `digest: sha256:…` is the verl build, pinned. A digest alone (no tag in your
values) hides which image it is: the chart's default tag stays in the values while `repository@digest` runs,
so a miles image pinned by digest passed under `framework: verl` before this rule read the reference.

## Fix
Build the framework's image from `images/` (`grpo-images build`, images/README.md) and set
`raycluster.image.tag` (or, under your own tag or a digest alone, `raycluster.image.build`) and
`raycluster.rayVersion` to the catalogued build and Ray version.
"""


def ray_image(ctx) -> str | None:
    """The image reference the Ray pods run, as the chart rendered it (a digest wins over the tag there)."""
    for o in ctx.of_kind("RayCluster"):
        pods = ((o.obj.get("spec") or {}).get("headGroupSpec") or {}).get("template") or {}
        containers = (pods.get("spec") or {}).get("containers") or []
        if containers and isinstance(containers[0], dict) and isinstance(containers[0].get("image"), str):
            return containers[0]["image"]
    return None


def check(ctx) -> Iterator[Hit]:
    if not ctx.has_values:
        return
    framework = ctx.get("global.job.framework")
    image = image_for(framework) if isinstance(framework, str) else None
    ref = ray_image(ctx)
    if image is None or ref is None:
        return
    wanted = (f"framework {framework} runs on the {image.tag} build ({framework} {image.version}, "
              f"{image.rollout_engine}; {image.dockerfile})")
    declared = ctx.get("raycluster.image.build") or ""
    _, tag, digest = split(ref)
    tag_key = "raycluster.image.repository" if tag is not None else "raycluster.image.tag"
    if tag is None and digest:
        # The chart renders repository@digest; the tag the user wrote beside the digest (what `grpo-images` writes
        # in images.lock.yaml) still names the build. The chart's default tag does not: it stays in the values
        # whatever image the digest is.
        stated = ctx.user_value("raycluster.image.tag")
        tag = stated if isinstance(stated, str) and stated else None
    elif tag is not None and not digest and tag == ctx.get("raycluster.image.tag"):
        tag_key = "raycluster.image.tag"
    if declared:
        if declared != image.tag:
            yield Hit("raycluster.image.build", f"raycluster.image.build declares {declared!r}, but {wanted}",
                      remediation=f"run the {image.tag} build and set raycluster.image.build: {image.tag}",
                      related=("global.job.framework",))
    elif tag is None:
        yield Hit("raycluster.image.digest",
                  f"{ref} is pinned by digest alone (no tag in your values), so its build cannot be read from it; "
                  f"{wanted}: the framework version is unknown",
                  remediation=f"set raycluster.image.tag: {image.tag} beside the digest when this digest is that "
                  f"build (grpo-images writes both), or raycluster.image.build: {image.tag}",
                  related=("global.job.framework",))
    elif tag != image.tag:
        yield Hit(tag_key, f"{ref} has tag {tag!r}, but {wanted}: the framework version is unknown",
                  remediation=f"set raycluster.image.tag: {image.tag}, or for an image rebuilt from "
                  f"{image.dockerfile} under your own tag raycluster.image.build: {image.tag}",
                  related=("global.job.framework",))
    ray = ctx.get("raycluster.rayVersion")
    if ray != image.ray_version:
        yield Hit("raycluster.rayVersion",
                  f"the {image.tag} build carries Ray {image.ray_version}, not {ray!r}",
                  remediation=f'set raycluster.rayVersion: "{image.ray_version}" in your values file',
                  related=("global.job.framework",))
