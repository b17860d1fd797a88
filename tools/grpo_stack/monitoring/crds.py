"""The Prometheus Operator CRDs shipped beside this module (crds/, SOURCES.json): their served v1 schemas, for
grpo-lint's object checks and the control-plane tier."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

CRD_DIR = Path(__file__).resolve().parent / "crds"
GROUP = "monitoring.coreos.com"
# libyaml's loader when PyYAML has it: the CRDs are 70 kB each.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@lru_cache(maxsize=1)
def definitions() -> dict[str, dict[str, Any]]:
    """Kind -> the CustomResourceDefinition object."""
    out = {}
    for path in sorted(CRD_DIR.glob("*.yaml")):
        crd = yaml.load(path.read_text(), Loader=_LOADER)  # noqa: S506 - a safe loader
        out[crd["spec"]["names"]["kind"]] = crd
    return out


def schema(kind: str, api_version: str) -> dict[str, Any] | None:
    """The openAPIV3Schema the CRD serves for `api_version`, or None when no shipped CRD has that kind/version."""
    group, _, version = api_version.rpartition("/")
    crd = definitions().get(kind) if group == GROUP else None
    if crd is None:
        return None
    served = [v for v in crd["spec"]["versions"] if v["name"] == version and v.get("served")]
    return served[0]["schema"]["openAPIV3Schema"] if served else None
