"""The local backend: `docker buildx build --push --metadata-file`, one image at a time, with its progress.

Where the check stops: the tests have no Docker daemon; they check the argv built here, the digest read from
buildx's documented metadata format, and the clear refusal when `docker buildx` is absent. The build itself
(and the Transformer Engine compile inside images/verl) runs only where Docker runs.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .overlay import digest_from_metadata
from .plan import ImageBuild

PLATFORM = "linux/amd64"  # the GPU and CPU instance types the chart schedules on are x86_64


class BackendMissing(Exception):
    """docker / buildx is not installed here (exit 2)."""


def argv(b: ImageBuild, metadata_file: Path, context: Path, docker: str = "docker") -> list[str]:
    out = [docker, "buildx", "build", "--push", "--platform", PLATFORM, "--progress", "plain",
           "--metadata-file", str(metadata_file), "-f", str(context / b.dockerfile), "-t", b.ref]
    for k, v in sorted(b.build_args.items()):
        out += ["--build-arg", f"{k}={v}"]
    return [*out, str(context)]


def check_available(docker: str = "docker") -> str:
    path = shutil.which(docker)
    if path is None:
        raise BackendMissing(f"{docker} is not on PATH: install Docker with the buildx plugin, or build in the "
                             "cluster (--backend cluster)")
    probe = subprocess.run([path, "buildx", "version"], capture_output=True, text=True)
    if probe.returncode != 0:
        raise BackendMissing(f"`{docker} buildx version` failed ({(probe.stderr or probe.stdout).strip()[:200]}): "
                             "install the buildx plugin, or build in the cluster (--backend cluster)")
    return path


def build_all(builds: list[ImageBuild], context: Path, docker: str = "docker",
              out=sys.stdout) -> list[tuple[ImageBuild, str]]:
    """Build and push each image in turn; (build, digest) for each. A failed build stops the rest
    (CalledProcessError carries its status)."""
    exe = check_available(docker)
    pinned = []
    with tempfile.TemporaryDirectory(prefix="grpo-images-") as tmp:
        for i, b in enumerate(builds, 1):
            meta = Path(tmp) / f"{b.name}.json"
            print(f"grpo-images: [{i}/{len(builds)}] {b.name}: building {b.ref} from {b.dockerfile}"
                  + (f" ({b.note})" if b.note else ""), file=out, flush=True)
            cmd = argv(b, meta, context, exe)
            proc = subprocess.run(cmd)
            if proc.returncode != 0:
                raise subprocess.CalledProcessError(proc.returncode, cmd)
            digest = digest_from_metadata(meta)
            print(f"grpo-images: [{i}/{len(builds)}] {b.name}: pushed {b.repository}@{digest}", file=out, flush=True)
            pinned.append((b, digest))
    return pinned
