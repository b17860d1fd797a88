"""The KubeRay CRDs the control plane serves: the served operator's own, with the v1.7.0 schemas the chart targets.

The operator built here is the newest release the Go module proxy serves (v1.5.0); the chart targets v1.7.0,
whose RayCluster schema has fields v1.5.0 lacks (`spec.upgradeStrategy`, added in v1.6.0). A cluster that runs
v1.7.0 validates against the v1.7.0 schema, so the API server here does too (shared/schemas/kuberay, taken from
KubeRay's v1.7.0 Helm chart); the object names, scope, subresources and printer columns come from the operator
module's config/crd/bases. The v1.5.0 operator reads what its own types know and ignores the rest.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
SCHEMA_VERSION = "v1.7.0"
# CRD file in the operator module -> the v1.7.0 schema file in shared/schemas/kuberay (None: keep the module's).
CRDS = {
    "ray.io_rayclusters.yaml": f"ray.io_rayclusters.{SCHEMA_VERSION}.json",
    "ray.io_rayjobs.yaml": f"ray.io_rayjobs.{SCHEMA_VERSION}.json",
    "ray.io_rayservices.yaml": None,
}


def shared_schemas_dir() -> Path:
    shared = Path(os.environ.get("GRPO_SHARED_DIR") or REPO_ROOT / ".." / "shared").resolve()
    return shared / "schemas" / "kuberay"


def kuberay_crds(module_crds: Path, schemas: Path | None = None) -> list[dict[str, Any]]:
    schemas = schemas or shared_schemas_dir()
    out = []
    for crd_file, schema_file in CRDS.items():
        crd = yaml.safe_load((module_crds / crd_file).read_text())
        if schema_file:
            path = schemas / schema_file
            if not path.is_file():
                raise FileNotFoundError(f"{path}: the KubeRay {SCHEMA_VERSION} schema the chart targets "
                                        "(shared/schemas/kuberay beside the clone, or GRPO_SHARED_DIR)")
            by_version = json.loads(path.read_text())["versions"]
            for version in crd["spec"]["versions"]:
                if version["name"] in by_version:
                    version["schema"] = {"openAPIV3Schema": copy.deepcopy(by_version[version["name"]])}
            crd["metadata"].setdefault("annotations", {})["grpo-stack.io/schema"] = f"kuberay {SCHEMA_VERSION}"
        out.append(crd)
    return out
