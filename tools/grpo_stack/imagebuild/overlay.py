"""The values overlay pinning every built image by digest (`helm install -f values.yaml -f images.lock.yaml`)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from .plan import ImageBuild

DIGEST = re.compile(r"^sha256:[a-f0-9]{64}$")
HEADER = ("# Written by grpo-images: every image this release builds, pinned by the digest the registry returned.\n"
          "# Use it after your values file: helm install ... -f <values>.yaml -f {name}\n")


class DigestError(Exception):
    """A build result names no usable digest."""


def digest_from_metadata(path: Path) -> str:
    """`containerimage.digest` from a `docker buildx build --metadata-file` (or `buildctl --metadata-file`) result."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise DigestError(f"{path}: cannot read the build metadata ({exc})") from exc
    digest = data.get("containerimage.digest") if isinstance(data, dict) else None
    if not isinstance(digest, str) or not DIGEST.match(digest):
        raise DigestError(f"{path}: no containerimage.digest (sha256:<64 hex>) in the build metadata: was the image "
                          "pushed (--push)?")
    return digest


def overlay(pinned: list[tuple[ImageBuild, str]]) -> dict:
    """{section: {image: {repository, tag, digest[, build]}}} for each (build, digest)."""
    out: dict = {}
    for b, digest in pinned:
        if not DIGEST.match(digest):
            raise DigestError(f"{b.name}: {digest!r} is not a sha256 digest")
        section = b.values_key.removesuffix(".image")
        image = {"repository": b.repository, "tag": b.tag, "digest": digest}
        if b.framework_build:
            image["build"] = b.framework_build
        out.setdefault(section, {})["image"] = image
    return out


def write(path: Path, pinned: list[tuple[ImageBuild, str]]) -> None:
    import yaml

    body = yaml.safe_dump(overlay(pinned), sort_keys=True, default_flow_style=False)
    path.write_text(HEADER.format(name=path.name) + body)
