"""GRPO815 privileged-placement."""

from __future__ import annotations

from collections.abc import Iterator

from ...apivalidation.podspecs import pod_metadata
from ..finding import Hit, Severity
from ._podsecurity import INSTANCE_TYPE_LABEL, all_containers, is_privileged, pod_label

CODE = "GRPO815"
NAME = "privileged-placement"
SEVERITY = Severity.ERROR
CATEGORY = "security"
SUMMARY = "A privileged container may be scheduled on shared nodes (no dedicated node selector and toleration)."
DOC = """## What it does
For a pod with a privileged container, requires placement on a dedicated node group: a `nodeSelector` with a label
other than the instance type (or a required node affinity) and at least one toleration (for that node group's
taint). A DaemonSet is not reported: a node agent (device plugin, feature discovery, CNI) runs on every node it
selects by design, and a dedicated node group is no placement for it. Nor is a pod that consumes a
ProvisioningRequest (`cluster-autoscaler.kubernetes.io/consume-provisioning-request`): the cluster autoscaler
provisions nodes for that request (a GKE queued-provisioning node pool gets nodes only so), which is the dedicated
placement.

## Why is this bad?
Escaping a privileged container owns the node, and with it every pod on that node: the Ray head, other teams'
workloads, their service-account tokens and volumes. The predecessor documented "only on a dedicated tainted node
group" but gave the sandbox no way to be placed there.

## Example
```yaml
sandbox-fusion:
  privileged: true
```
Use instead:
```yaml
sandbox-fusion:
  privileged: true
  dedicatedNodes:
    nodeSelector: {grpo-stack/sandbox: "true"}
    tolerations: [{key: grpo-stack/sandbox, operator: Exists, effect: NoSchedule}]
```

## Fix
Give the pod the node selector and toleration of a node group that runs nothing else (in grpo-stack:
`sandbox-fusion.dedicatedNodes`), or turn privileged off.
"""


# A pod that consumes a ProvisioningRequest runs on capacity the cluster autoscaler provisions for that request
# (kubernetes/autoscaler's ProvisioningRequest API; GKE's queued-provisioning node pools get nodes only through it).
CONSUMES_REQUEST = "cluster-autoscaler.kubernetes.io/consume-provisioning-request"


def _provisioned_for(o, pod_path: str) -> bool:
    annotations = pod_metadata(o.obj, pod_path).get("annotations")
    return isinstance(annotations, dict) and bool(annotations.get(CONSUMES_REQUEST))


def _dedicated(pod: dict) -> bool:
    selector = {k for k in (pod.get("nodeSelector") or {}) if k != INSTANCE_TYPE_LABEL}
    affinity = (((pod.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution"))
    return bool(selector or affinity) and bool(pod.get("tolerations"))


def check(ctx) -> Iterator[Hit]:
    for o, pod_path, pod in ctx.pod_templates():
        if o.kind == "DaemonSet":
            continue  # a node agent: it runs on every node it selects by design
        privileged = [c.get("name") for _, _, c in all_containers(pod) if is_privileged(c)]
        if privileged and not _dedicated(pod) and not _provisioned_for(o, pod_path):
            yield Hit(pod_path, f"{pod_label(o, pod_path)}: privileged container {', '.join(privileged)} has no "
                      "dedicated node group (node selector beyond the instance type, and a toleration)", obj=o)
