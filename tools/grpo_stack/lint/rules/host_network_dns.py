"""GRPO852 host-network-dns."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..controllers import controller_services
from ..finding import Hit, Severity

CODE = "GRPO852"
NAME = "host-network-dns"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = ("A `hostNetwork: true` pod that resolves cluster names keeps the default `dnsPolicy` (it gets the "
           "node's DNS).")
DOC = """## What it does
Reports a pod template (any controller) with `hostNetwork: true` and `dnsPolicy` unset or `ClusterFirst`
when its pods resolve cluster names: a string in the pod spec names a `*.svc` address or a Service of the set
(`http://name:port`, `name.namespace`, a JobSet / LeaderWorkerSet pod host name), the pod is a Ray worker (it
reaches the head by its Service name), or it reads `LWS_LEADER_ADDRESS`. A `dnsPolicy` of `Default` or `None`
is a choice and is not reported; a host-network pod that names nothing in the cluster (a device plugin, a node
agent) is not reported.

## Why is this bad?
With `hostNetwork: true`, the kubelet treats `ClusterFirst` as `Default`: the pod gets the node's
`/etc/resolv.conf`, which does not know `*.svc.cluster.local`. Ray workers cannot find the head, torchrun
cannot find its rendezvous host, and the pod crash-loops on a name that resolves everywhere else.

## Example
```yaml
spec:
  hostNetwork: true
  containers: [{name: worker, image: rayproject/ray:2.49.1}]
```
Use instead:
```yaml
spec:
  hostNetwork: true
  dnsPolicy: ClusterFirstWithHostNet
```

## Fix
Set `dnsPolicy: ClusterFirstWithHostNet` beside `hostNetwork: true`, or drop `hostNetwork` (EFA and most RDMA
plugins do not need it).
"""

CLUSTER_NAME = re.compile(r"[\w-]\.svc(\.[\w.-]+)?\b|\$\(?LWS_LEADER_ADDRESS\)?|\$\{?LWS_LEADER_ADDRESS\}?")


def _names(ctx) -> set[str]:
    return {o.name for o in ctx.of_kind("Service")} | controller_services(ctx.objects)


def _names_a_service(text: str, names: set[str], address_field: bool) -> str | None:
    """The Service a string reaches by name: in an address form anywhere, or as the whole string where a program
    reads an address (an env value, a command or an argument; a container's or ServiceAccount's name that equals
    a Service's is no lookup)."""
    for name in names:
        if len(name) < 3 or name not in text:
            continue
        n = re.escape(name)
        # `.name` is a host under the Service's name; `/.name` is a dot-directory (`/root/.ollama`), no lookup
        if re.search(rf"(://|@){n}\b(?![.-]\w)|(?<![\w.-]){n}:\d+|(?<![/~])\.{n}(?![\w-])|(?<![\w.-]){n}\.[a-z0-9-]+\.svc",
                     text) or (address_field and text.strip() == name):
            return name
    return None


def _address_field(path: str) -> bool:
    parts = path.split(".")
    return "command" in parts or "args" in parts or (len(parts) >= 2 and parts[-1] == "value" and "env" in parts)


def _resolves(ctx, o, pod_path: str, names: set[str]) -> str | None:
    """Why the pod resolves cluster names, or None."""
    if ctx.pod_labels(o, pod_path).get("ray.io/node-type") == "worker":
        return "it is a Ray worker, which reaches the head by its Service name"
    for path, text in ctx.strings_under(o, pod_path):
        if path.endswith(".image"):
            continue  # `registry/team/name:1.4` is a reference, not `name:port`
        m = CLUSTER_NAME.search(text)
        if m:
            return f"it names {m.group(0).strip('.$(){}')!r}"
        name = _names_a_service(text, names, _address_field(path))
        if name:
            return f"it names the Service {name!r}"
    return None


def check(ctx) -> Iterator[Hit]:
    names = _names(ctx)
    for o, pod_path, pod in ctx.pod_templates():
        if pod.get("hostNetwork") is not True or str(pod.get("dnsPolicy", "ClusterFirst")) != "ClusterFirst":
            continue
        why = _resolves(ctx, o, pod_path, names)
        if why:
            yield Hit(f"{pod_path}.hostNetwork", f"{o.kind} {o.name}: hostNetwork without dnsPolicy: "
                      f"ClusterFirstWithHostNet gets the node's DNS, but {why}", obj=o)
