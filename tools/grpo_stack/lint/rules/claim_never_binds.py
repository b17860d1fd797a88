"""GRPO864 claim-never-binds."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..finding import Hit, Severity
from ._podsecurity import namespace_of
from ._quantity import quantity

CODE = "GRPO864"
NAME = "claim-never-binds"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = ("A claim names a PersistentVolume of the set that cannot satisfy it, or asks a StorageClass of the set "
           "whose provisioner refuses to create its volume: the claim stays Pending and every pod that mounts it "
           "with it.")
DOC = """## What it does
For every PersistentVolumeClaim that names its volume (`spec.volumeName`) where that PersistentVolume is in the
same set, applies the checks Kubernetes' PersistentVolume controller makes before it binds a claim to the volume
it names (`checkVolumeSatisfyClaim` in kubernetes `pkg/controller/volume/persistentvolume/pv_controller.go`):
- the volume's `capacity.storage` is at least the claim's `resources.requests.storage`;
- both state the same `storageClassName` (an omitted class is `""` on a volume);
- both have the same `volumeMode` (`Filesystem` when omitted);
- the volume offers every access mode the claim asks for;
- the volume's `claimRef`, where it has one, names this claim.

Each of these is an error. A claim that states no `storageClassName` beside a volume with none is a warning:
the API server's DefaultStorageClass admission plugin writes the cluster's default class into such a claim when
it is created, and then the classes differ; it binds only on a cluster with no default StorageClass.

A claim that names no volume and asks for a StorageClass of the set is provisioned by that class's CSI driver,
unless a PersistentVolume of the set has the same class (the controller binds a matching volume first). Two
drivers refuse every volume when the class lacks a parameter they require, and such a claim is an error:
- FSx for Lustre (`fsx.csi.aws.com`) creates a file system in a subnet: without `subnetId` its `CreateFileSystem`
  fails with `SubnetId is required` (aws-fsx-csi-driver `pkg/cloud/cloud.go`, every release since v0.4.0);
- EFS (`efs.csi.aws.com`) creates an access point in a file system: without `provisioningMode` it fails with
  `Missing provisioningMode parameter`, and without `fileSystemId` (or, since v2, `fileSystemIdConfigRef` /
  `fileSystemIdSecretRef`) with `fileSystemId not specified` (aws-efs-csi-driver `pkg/driver/controller.go`,
  `filesystem_id_finder.go`).

## Why is this bad?
The controller never binds the pair: the claim stays `Pending` with a `VolumeMismatch` event ("Cannot bind to
requested volume ...: requested PV is too small", "incompatible accessMode", ...), and every pod that mounts the
claim stays `Pending` (`pod has unbound immediate PersistentVolumeClaims`), after the nodes were scaled up for it.
Nothing else reports it: both objects are valid on their own. A class its driver refuses leaves the claim
`Pending` with a `ProvisioningFailed` event repeated on every retry, and nothing is created.

## Example
```yaml
kind: PersistentVolume
metadata: {name: weights-pv}
spec:
  capacity: {storage: 100Gi}
  accessModes: [ReadOnlyMany]
  storageClassName: ""
  nfs: {server: 10.0.0.2, path: /exports/weights}
---
kind: PersistentVolumeClaim
metadata: {name: weights}
spec:
  volumeName: weights-pv
  storageClassName: ""
  accessModes: [ReadWriteMany]         # the volume offers ReadOnlyMany only
  resources: {requests: {storage: 200Gi}}   # more than the volume's 100Gi
```
Use instead:
```yaml
kind: PersistentVolumeClaim
metadata: {name: weights}
spec:
  volumeName: weights-pv
  storageClassName: ""
  accessModes: [ReadOnlyMany]
  resources: {requests: {storage: 100Gi}}
```

## Fix
Request at most the volume's capacity (or grow the volume), ask only for access modes it lists, and state the same
`storageClassName` and `volumeMode` on both; for a static volume, `storageClassName: ""` on both. Give a
provisioning class the parameters its driver requires (FSx: `subnetId` and `securityGroupIds`; EFS:
`provisioningMode: efs-ap` and `fileSystemId`), or bind the claim to a static volume of an existing file system.
"""

BETA_CLASS = "volume.beta.kubernetes.io/storage-class"


# CSI driver -> the StorageClass parameters without which it refuses to create any volume, each as the
# alternatives any one of which will do, with the driver's own error.
REQUIRED_PARAMETERS = {
    "fsx.csi.aws.com": ((("subnetId",), "SubnetId is required"),),
    "efs.csi.aws.com": ((("provisioningMode",), "Missing provisioningMode parameter"),
                        (("fileSystemId", "fileSystemIdConfigRef", "fileSystemIdSecretRef"),
                         "fileSystemId not specified in volume parameters")),
}


def check(ctx) -> Iterator[Hit]:
    yield from _refused_provisioning(ctx)
    volumes = {v.name: v for v in ctx.of_kind("PersistentVolume")}
    if not volumes:
        return
    for claim in ctx.of_kind("PersistentVolumeClaim"):
        spec = claim.obj.get("spec") if isinstance(claim.obj.get("spec"), dict) else {}
        volume = volumes.get(spec.get("volumeName")) if isinstance(spec.get("volumeName"), str) else None
        if volume is None:
            continue
        pv = volume.obj.get("spec") if isinstance(volume.obj.get("spec"), dict) else {}
        yield from _mismatches(ctx, claim, spec, volume, pv)


def _refused_provisioning(ctx) -> Iterator[Hit]:
    """Claims left to a StorageClass of the set whose driver refuses to provision: no volume named, no volume of
    the set in that class to bind to first."""
    refusals = {c.name: why for c in ctx.of_kind("StorageClass") if (why := _refusal(c.obj))}
    if not refusals:
        return
    static_classes = {_class(v, v.obj.get("spec") if isinstance(v.obj.get("spec"), dict) else {})
                      for v in ctx.of_kind("PersistentVolume")}
    for claim in ctx.of_kind("PersistentVolumeClaim"):
        spec = claim.obj.get("spec") if isinstance(claim.obj.get("spec"), dict) else {}
        wanted = _class(claim, spec)
        if spec.get("volumeName") or wanted not in refusals or wanted in static_classes:
            continue
        yield Hit("spec.storageClassName", f"claim {claim.name} asks StorageClass {wanted} for a new volume, and "
                  f"{refusals[wanted]}: the claim stays Pending (ProvisioningFailed) and every pod that mounts "
                  "it with it", obj=claim)


def _refusal(storage_class: dict[str, Any]) -> str | None:
    driver = storage_class.get("provisioner")
    required = REQUIRED_PARAMETERS.get(driver) if isinstance(driver, str) else None
    if not required:
        return None
    given = storage_class.get("parameters") if isinstance(storage_class.get("parameters"), dict) else {}
    for names, error in required:
        if not any(str(given.get(n) or "").strip() for n in names):
            return (f"its driver {driver} refuses without parameter {' or '.join(names)} "
                    f"({error!r})")
    return None


def _mismatches(ctx, claim, spec: dict[str, Any], volume, pv: dict[str, Any]) -> Iterator[Hit]:
    named = f"claim {claim.name} names PersistentVolume {volume.name}"
    asked = quantity(_storage(spec.get("resources"), "requests"))
    offered = quantity(_storage(pv, "capacity"))
    if asked is not None and offered is not None and offered < asked:
        yield Hit("spec.resources.requests.storage",
                  f"{named}, whose capacity {_storage(pv, 'capacity')} is less than the "
                  f"{_storage(spec.get('resources'), 'requests')} the claim requests: the controller never binds "
                  "them (VolumeMismatch: requested PV is too small) and the claim stays Pending", obj=claim)
    yield from _class_mismatch(named, claim, spec, pv, volume)
    if _mode(spec) != _mode(pv):
        yield Hit("spec.volumeMode", f"{named}, whose volumeMode is {_mode(pv)} while the claim's is {_mode(spec)}: "
                  "the claim stays Pending (VolumeMismatch: incompatible volumeMode)", obj=claim)
    wanted = [m for m in _modes(spec) if m not in _modes(pv)]
    if wanted and _modes(pv):
        yield Hit("spec.accessModes", f"{named}, which offers {', '.join(_modes(pv))} but not "
                  f"{', '.join(wanted)}: the claim stays Pending (VolumeMismatch: incompatible accessMode)", obj=claim)
    ref = pv.get("claimRef") if isinstance(pv.get("claimRef"), dict) else {}
    ref_ns = ref.get("namespace") or namespace_of(claim, ctx.namespace)
    if ref.get("name") and (ref.get("name"), ref_ns) != (claim.name, namespace_of(claim, ctx.namespace)):
        yield Hit("spec.volumeName", f"{named}, whose claimRef reserves it for {ref_ns}/{ref.get('name')}: this "
                  "claim stays Pending", obj=claim)


def _class_mismatch(named: str, claim, spec: dict[str, Any], pv: dict[str, Any], volume) -> Iterator[Hit]:
    volume_class = _class(volume, pv) or ""
    claim_class = _class(claim, spec)
    if claim_class is None:
        if not volume_class:
            yield Hit("spec.storageClassName", f"{named}, which has no storage class, and states none itself: on a "
                      "cluster with a default StorageClass the API server writes that class into the claim and the "
                      "controller never binds them (VolumeMismatch: storageClassName does not match). Assumed: the "
                      "cluster has a default StorageClass", severity=Severity.WARNING, obj=claim)
        else:
            yield Hit("spec.storageClassName", f"{named}, of storage class {volume_class}, and states no class: it "
                      f"gets the cluster's default class, if any, and binds only where that default is "
                      f"{volume_class}. Assumed: the default class is another or there is none",
                      severity=Severity.WARNING, obj=claim)
    elif claim_class != volume_class:
        none = '"" (none)'
        yield Hit("spec.storageClassName", f"{named}, of storage class {volume_class or none}, while the claim asks "
                  f"for {claim_class or none}: the controller never binds them (VolumeMismatch: storageClassName "
                  "does not match)", obj=claim)


def _class(o, spec: dict[str, Any]) -> str | None:
    """The object's storage class as the controller reads it (the beta annotation first), None where it states
    none (a claim then gets the cluster's default class when it is created)."""
    annotations = (o.obj.get("metadata") or {}).get("annotations")
    if isinstance(annotations, dict) and isinstance(annotations.get(BETA_CLASS), str):
        return annotations[BETA_CLASS]
    named = spec.get("storageClassName")
    return named if isinstance(named, str) else None


def _storage(block: Any, key: str) -> Any:
    inner = block.get(key) if isinstance(block, dict) else None
    return inner.get("storage") if isinstance(inner, dict) else None


def _mode(spec: dict[str, Any]) -> str:
    mode = spec.get("volumeMode")
    return mode if isinstance(mode, str) and mode else "Filesystem"


def _modes(spec: dict[str, Any]) -> list[str]:
    modes = spec.get("accessModes")
    return [m for m in modes if isinstance(m, str)] if isinstance(modes, list) else []
