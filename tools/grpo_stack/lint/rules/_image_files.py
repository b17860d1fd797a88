"""Container images given as a file on the node, not a registry reference."""

from __future__ import annotations

import re

# Image files that runtimes other than an OCI one start: Singularity/Apptainer (`.sif`, `.simg`), Enroot and
# squashfs (`.sqsh`, `.squashfs`), raw images (`.img`). Virtual kubelets that hand a pod to Slurm or an HPC
# site's Apptainer (interLink, for one) take `image: /path/to/x.sif`. An OCI reference never starts with `/`,
# so such a path is not a registry image with an empty part, nor a tag to pin.
IMAGE_FILE = re.compile(r"^/[^:@\s]*\.(sif|simg|sqsh|squashfs|img)$", re.IGNORECASE)


def is_image_file(image: str) -> bool:
    """An absolute path to an image file (`/ceph/images/trainer_v1.2.sif`), with no tag or digest."""
    return bool(IMAGE_FILE.match(image.strip()))
