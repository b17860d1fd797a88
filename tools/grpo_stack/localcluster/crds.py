"""The KubeRay CRDs the local cluster serves: the served operator's own, with the v1.7.0 schemas the chart targets.

The operator built here is the newest release the Go module proxy serves (v1.5.0); the chart targets v1.7.0,
whose RayCluster schema has fields v1.5.0 lacks (`spec.upgradeStrategy`, added in v1.6.0). A cluster that runs
v1.7.0 validates against the v1.7.0 schema, so the API server here does too (the schemas grpo-lint ships,
grpo_stack/crds, taken from KubeRay's v1.7.0 Helm chart); the object names, scope, subresources and printer
columns come from the operator module's config/crd/bases (v1.5.0, pinned by modules/kuberay/go.sum).
The v1.5.0 operator reads what its own types know and ignores the rest.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import yaml

from ..kuberay_crd import KUBERAY_VERSION as SCHEMA_VERSION
from ..kuberay_crd import shipped_path

# CRD file in the operator module -> the kind whose shipped v1.7.0 schema replaces the module's (None: keep it).
CRDS = {
    "ray.io_rayclusters.yaml": "rayclusters",
    "ray.io_rayjobs.yaml": "rayjobs",
    "ray.io_rayservices.yaml": None,
}


def kuberay_crds(module_crds: Path) -> list[dict[str, Any]]:
    out = []
    for crd_file, kind in CRDS.items():
        crd = yaml.safe_load((module_crds / crd_file).read_text())
        if kind:
            path = shipped_path(kind)
            by_version = json.loads(path.read_text())["versions"]
            for version in crd["spec"]["versions"]:
                if version["name"] in by_version:
                    version["schema"] = {"openAPIV3Schema": copy.deepcopy(by_version[version["name"]])}
            crd["metadata"].setdefault("annotations", {})["grpo-stack.io/schema"] = f"kuberay {SCHEMA_VERSION}"
        out.append(crd)
    return out
