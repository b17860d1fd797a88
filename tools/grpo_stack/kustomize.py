"""What kustomize reads beside a manifest file: a directory's kustomization, and whether it lists the file."""

from __future__ import annotations

import os

# The names kustomize reads a directory's kustomization from (kustomize api/konfig: RecognizedKustomizationFileNames).
KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")


def kustomization_beside(path: str) -> str | None:
    """The kustomization file of the file's own directory, or None (kustomize reads the first name it finds)."""
    folder = os.path.dirname(os.path.abspath(path))
    for name in KUSTOMIZATION_FILES:
        candidate = os.path.join(folder, name)
        if os.path.isfile(candidate):
            return candidate
    return None


def kustomize_resource(path: str) -> bool:
    """Whether the kustomization beside the file lists it among its `resources`: the file is applied through
    kustomize (`kubectl apply -k DIR`, or an overlay that includes DIR), not as it stands."""
    from .errors import InputError
    from .filereader import read_text
    from .safeyaml import load_input

    found = kustomization_beside(path)
    if found is None:
        return False
    try:
        docs = load_input(read_text(found), found, lambda _docs: True)
    except InputError:
        return False
    listed = docs[0].get("resources") if docs and isinstance(docs[0], dict) else None
    base = os.path.basename(path)
    return isinstance(listed, list) and any(isinstance(r, str) and os.path.normpath(r) == base for r in listed)
