"""What a release namespace must hold before `helm install` (README, prerequisites): the Hugging Face token Secret
and the FSx PVC.

Names default to the chart's own (its values.yaml `global.secrets.hfToken`, `global.storage.claimName`), never
repeated here; `grpo-cluster up` passes the ones the user's values choose. The PVC binds to a static PV as an FSx
for Lustre volume made by hand would (`storageClassName: ""`, `volumeName`), through the controller manager's PV
binder. The token is a placeholder: nothing here reaches the Hugging Face Hub.
"""

from __future__ import annotations

import time
from typing import Any

import yaml

from ..paths import chart_dir

FSX_CAPACITY = "1200Gi"  # the smallest FSx for Lustre file system
PLACEHOLDER_TOKEN = "hf_local_cluster_placeholder"


def chart_globals() -> dict[str, Any]:
    return yaml.safe_load((chart_dir() / "values.yaml").read_text())["global"]


def prerequisite_objects(namespace: str, secret: tuple[str, str] | None = None, claim: str | None = None,
                         capacity: str = FSX_CAPACITY) -> list[dict[str, Any]]:
    g = chart_globals()
    secret_name, secret_key = secret or (g["secrets"]["hfToken"]["name"], g["secrets"]["hfToken"]["key"])
    claim = claim or g["storage"]["claimName"]
    pv_name = f"fsx-{namespace}-{claim}"
    return [
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": secret_name, "namespace": namespace},
         "type": "Opaque", "stringData": {secret_key: PLACEHOLDER_TOKEN}},
        {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": pv_name},
         "spec": {"capacity": {"storage": capacity}, "accessModes": ["ReadWriteMany"],
                  "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "",
                  "mountOptions": ["flock"],
                  "csi": {"driver": "fsx.csi.aws.com", "volumeHandle": f"fs-0123456789abcdef0-{namespace}",
                          "volumeAttributes": {"dnsname": "fs-0123456789abcdef0.fsx.us-west-2.amazonaws.com",
                                               "mountname": "abcdefgh"}},
                  "claimRef": {"namespace": namespace, "name": claim}}},
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": claim, "namespace": namespace},
         "spec": {"accessModes": ["ReadWriteMany"], "storageClassName": "", "volumeName": pv_name,
                  "resources": {"requests": {"storage": capacity}}}},
    ]


def install_prerequisites(cp, namespace: str, timeout: float = 60, *, secret: tuple[str, str] | None = None,
                          claim: str | None = None, capacity: str = FSX_CAPACITY) -> None:
    """Create the Secret, PV and PVC in `namespace` and wait until the PVC is Bound."""
    cp.apply(prerequisite_objects(namespace, secret, claim, capacity))
    claim = claim or chart_globals()["storage"]["claimName"]
    deadline = time.monotonic() + timeout
    while cp.get("-n", namespace, "pvc", claim)["status"].get("phase") != "Bound":
        if time.monotonic() > deadline:
            raise RuntimeError(f"PVC {namespace}/{claim} not Bound after {timeout:.0f}s")
        time.sleep(0.5)
