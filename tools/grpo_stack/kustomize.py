"""What kustomize reads beside manifest files: a directory's kustomization, and the namespace it gives a file's
objects."""

from __future__ import annotations

import os

# The names kustomize reads a directory's kustomization from (kustomize api/konfig: RecognizedKustomizationFileNames).
KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")


def kustomizations_beside(paths: list[str]) -> dict[str, str]:
    """Each file's kustomization (the one of its own directory; kustomize reads the first name it finds), for the
    files that have one. Each directory is looked at once: a set of many manifests shares a few."""
    folders: dict[str, str | None] = {}
    out = {}
    for path in paths:
        folder = os.path.dirname(os.path.abspath(path))
        if folder not in folders:
            folders[folder] = next((c for c in (os.path.join(folder, n) for n in KUSTOMIZATION_FILES)
                                    if os.path.isfile(c)), None)
        if folders[folder]:
            out[path] = folders[folder]
    return out


def _kustomization(path: str) -> dict:
    """The kustomization file's first document, or {} where it cannot be read."""
    from .errors import InputError
    from .filereader import read_text
    from .safeyaml import load_input

    try:
        docs = load_input(read_text(path), path, lambda _docs: True)
    except InputError:
        return {}
    return docs[0] if docs and isinstance(docs[0], dict) else {}


def _resources(kustomization: dict) -> list[str]:
    listed = kustomization.get("resources")
    return [r for r in listed if isinstance(r, str)] if isinstance(listed, list) else []


def kustomize_namespaces(paths: list[str]) -> dict[str, str]:
    """The namespace kustomize gives the objects of each file, where the files show it: the file is listed by the
    kustomization beside it, and that kustomization sets `namespace:`, or another file's kustomization (an overlay)
    that sets one includes the file's directory among its resources (`../../base/app`)."""
    beside = kustomizations_beside(paths)
    read = {k: _kustomization(k) for k in set(beside.values())}
    overlays = {}  # a directory an overlay includes -> the namespace the overlay sets
    for k, doc in read.items():
        ns = doc.get("namespace")
        if isinstance(ns, str) and ns:
            for r in _resources(doc):
                overlays.setdefault(os.path.normpath(os.path.join(os.path.dirname(k), r)), ns)
    out = {}
    for p, k in beside.items():
        doc = read[k]
        if os.path.basename(p) not in {os.path.normpath(r) for r in _resources(doc)}:
            continue  # not applied through this kustomization
        ns = doc.get("namespace")
        ns = ns if isinstance(ns, str) and ns else overlays.get(os.path.dirname(k))
        if ns:
            out[p] = ns
    return out
