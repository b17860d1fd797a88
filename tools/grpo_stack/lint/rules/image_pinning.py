"""GRPO701 image-pinning."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..finding import Hit, Severity
from ._objects import containers, values_section

CODE = "GRPO701"
NAME = "image-pinning"
SEVERITY = Severity.ERROR
SUMMARY = ("An image is not pinned (latest, no tag, floating tag), is re-pulled on every start, "
           "or differs where it must not.")
DOC = """## What it does
Checks every container image in the rendered objects. It must carry a digest (`@sha256:`) or an exact tag: one
containing a full `x.y.z` version or an 8-digit date stamp (`v0.20.2`, `3.11.15-slim`, `server-20250609`).
`latest`, a missing tag and floating tags such as `3.11-slim` are errors. Pinned images must use
`imagePullPolicy: IfNotPresent`. The Ray head and every Ray worker group must run the same image reference.

## Why is this bad?
A floating tag changes under a running cluster: the predecessor's driver images drifted between Python 3.11 and
3.12 across Jobs. `Always` re-pulls a multi-gigabyte image on every restart and breaks air-gapped clusters.
A head and workers on different builds fail at the first Ray call with version mismatches.

## Example
```yaml
fsx-utils:
  image: {repository: python, tag: 3.11-slim, digest: ""}
```
Use instead:
```yaml
fsx-utils:
  image: {repository: python, tag: 3.11.15-slim, digest: ""}
```

## Fix
Pin the tag to an exact release (or set `digest`), and keep `IfNotPresent`.
"""

PINNED_TAG = re.compile(r"\d+\.\d+\.\d+|\d{8}")


def split(image: str) -> tuple[str, str | None, str | None]:
    """(repository, tag, digest)"""
    repo, _, digest = image.partition("@")
    last = repo.rsplit("/", 1)[-1]
    tag = None
    if ":" in last:
        repo, tag = repo.rsplit(":", 1)
    return repo, tag, digest or None


def check(ctx) -> Iterator[Hit]:
    ray_images: dict[str, set[str]] = {}
    for o, pod_path, pod in ctx.pod_templates():
        section = values_section(ctx, o, pod_path)
        if section and section.startswith("raycluster"):
            section = "raycluster"
        for field, i, c in containers(pod):
            image, path = str(c.get("image", "")), f"{pod_path}.{field}.{i}"
            repo, tag, digest = split(image)
            key, where = (f"{section}.image.tag", {}) if section else (f"{path}.image", {"obj": o})
            pinned = bool(digest) or bool(tag and tag != "latest" and PINNED_TAG.search(tag))
            if not pinned:
                why = "no tag" if not tag else ("`latest`" if tag == "latest" else f"floating tag {tag!r}")
                yield Hit(key, f"{o.kind} {o.name}: image {image} is not pinned ({why})", **where)
            elif c.get("imagePullPolicy", "IfNotPresent" if tag != "latest" else "Always") != "IfNotPresent":
                yield Hit(f"{path}.imagePullPolicy", f"{o.kind} {o.name}: pinned image {image} uses imagePullPolicy "
                          f"{c.get('imagePullPolicy')}; use IfNotPresent", obj=o)
            if o.kind == "RayCluster":
                ray_images.setdefault(o.name, set()).add(image)
    for name, images in ray_images.items():
        if len(images) > 1:
            o = next(x for x in ctx.of_kind("RayCluster") if x.name == name)
            yield Hit("spec", f"RayCluster {name} runs different images on head and workers: "
                      f"{', '.join(sorted(images))}", obj=o)
