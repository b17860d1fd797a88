"""The staged directory's manifest: every file with size and sha256, the repository and the revision, written
byte-for-byte reproducibly (sorted keys, two-space indent, trailing newline) so two stagings can be diffed."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from tqdm import tqdm

from ..digest import sha256_file
from .checks import MANIFEST, model_files


def file_table(root: Path, progress: bool) -> list[dict[str, Any]]:
    files = model_files(root)
    return [{"path": rel, "size": (root / rel).stat().st_size, "sha256": sha256_file(root / rel)}
            for rel in tqdm(files, desc="sha256", unit="file", disable=not progress)]


def render(body: dict[str, Any]) -> bytes:
    return (json.dumps(body, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def write(root: Path, body: dict[str, Any]) -> Path:
    path = root / MANIFEST
    fd, name = tempfile.mkstemp(dir=root, prefix=f".{MANIFEST}.", suffix=".partial")  # one per writer
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(render(body))
        os.replace(name, path)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    return path


def compare(root: Path, manifest: dict[str, Any], progress: bool) -> dict[str, list[str]]:
    """{file: problems} of the directory against its manifest: missing, resized, changed or unlisted files."""
    bad: dict[str, list[str]] = {}
    listed = {f["path"]: f for f in manifest.get("files", [])}
    present = set(model_files(root))
    for rel in sorted(set(listed) - present):
        bad[rel] = ["missing"]
    for rel in sorted(present - set(listed)):
        bad[rel] = ["not in the manifest"]
    for rel in tqdm(sorted(present & set(listed)), desc="verify", unit="file", disable=not progress):
        want, path = listed[rel], root / rel
        size = path.stat().st_size
        if size != want.get("size"):
            bad[rel] = [f"size {size}, manifest {want.get('size')}"]
        elif sha256_file(path) != want.get("sha256"):
            bad[rel] = ["sha256 differs from the manifest"]
    return bad
