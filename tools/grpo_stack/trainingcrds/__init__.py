"""The Kubeflow training operators' CRDs shipped as package data (crds/, provenance in crds/SOURCES.json): the
schema each serves for a PyTorchJob, TFJob, MPIJob, JAXJob, PaddleJob or XGBoostJob, for grpo-lint's object checks
and the control-plane tier."""

from __future__ import annotations

import gzip
import json
from functools import cache
from pathlib import Path
from typing import Any

CRD_DIR = Path(__file__).resolve().parent / "crds"


@cache
def sources() -> dict[str, dict[str, Any]]:
    """File name -> its provenance and what it serves (kind, group, served versions)."""
    return json.loads((CRD_DIR / "SOURCES.json").read_text(encoding="utf-8"))["files"]


@cache
def definition(file: str) -> dict[str, Any]:
    """One shipped CustomResourceDefinition, as released."""
    return json.loads(gzip.decompress((CRD_DIR / file).read_bytes()))


def file_serving(kind: str, api_version: str) -> str | None:
    """The shipped CRD file that serves `kind` at `api_version`, or None."""
    group, _, version = api_version.rpartition("/")
    for file, meta in sources().items():
        if meta["kind"] == kind and meta["group"] == group and version in meta["served"]:
            return file
    return None


def schema(kind: str, api_version: str) -> dict[str, Any] | None:
    """The openAPIV3Schema a shipped CRD serves for `kind` at `api_version`, or None."""
    file = file_serving(kind, api_version)
    if file is None:
        return None
    version = api_version.rpartition("/")[2]
    return next(v["schema"]["openAPIV3Schema"] for v in definition(file)["spec"]["versions"] if v["name"] == version)
