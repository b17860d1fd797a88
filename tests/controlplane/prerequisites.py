"""What a release namespace must hold before `helm install` (docs/README): the `hf-token` Secret and the FSx PVC.

Names come from the chart's own defaults (charts/grpo-stack/values.yaml `global.secrets.hfToken`,
`global.storage.claimName`), never repeated here. The PVC binds to a static PV as an FSx for Lustre volume made
by hand would (`storageClassName: ""`, `volumeName`), through the controller manager's PV binder.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
FSX_CAPACITY = "1200Gi"  # the smallest FSx for Lustre file system


def chart_globals() -> dict[str, Any]:
    return yaml.safe_load((REPO_ROOT / "charts" / "grpo-stack" / "values.yaml").read_text())["global"]


def prerequisite_objects(namespace: str) -> list[dict[str, Any]]:
    g = chart_globals()
    secret, claim = g["secrets"]["hfToken"], g["storage"]["claimName"]
    pv_name = f"fsx-{namespace}-{claim}"
    return [
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": secret["name"], "namespace": namespace},
         "type": "Opaque", "stringData": {secret["key"]: "hf_not_a_real_token"}},
        {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": pv_name},
         "spec": {"capacity": {"storage": FSX_CAPACITY}, "accessModes": ["ReadWriteMany"],
                  "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "",
                  "mountOptions": ["flock"],
                  "csi": {"driver": "fsx.csi.aws.com", "volumeHandle": f"fs-0123456789abcdef0-{namespace}",
                          "volumeAttributes": {"dnsname": "fs-0123456789abcdef0.fsx.us-west-2.amazonaws.com",
                                               "mountname": "abcdefgh"}},
                  "claimRef": {"namespace": namespace, "name": claim}}},
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": claim, "namespace": namespace},
         "spec": {"accessModes": ["ReadWriteMany"], "storageClassName": "", "volumeName": pv_name,
                  "resources": {"requests": {"storage": FSX_CAPACITY}}}},
    ]


def install_prerequisites(cp, namespace: str, timeout: float = 60) -> None:
    """Create the Secret, PV and PVC in `namespace` and wait until the PVC is Bound."""
    cp.apply(prerequisite_objects(namespace))
    claim = chart_globals()["storage"]["claimName"]
    deadline = time.monotonic() + timeout
    while cp.get("-n", namespace, "pvc", claim)["status"].get("phase") != "Bound":
        if time.monotonic() > deadline:
            raise RuntimeError(f"PVC {namespace}/{claim} not Bound after {timeout:.0f}s")
        time.sleep(0.5)
