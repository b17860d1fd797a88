"""GRPO861 egress-blocks-downloads."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from ..finding import Hit, Severity
from ..shell import config_map_data
from ._cache_paths import downloads, mount_at, offline
from ._podsecurity import pod_label, policies_selecting, policy_types, port_entry_admits

CODE = "GRPO861"
NAME = "egress-blocks-downloads"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = ("NetworkPolicies isolate a pod's egress and admit no address outside the cluster, yet the pod downloads "
           "its model from the Hugging Face Hub when it starts.")
DOC = """## What it does
For each pod template (any controller) with a container that pulls from the Hugging Face Hub when it starts (a
server's `--model org/name` or its image's entrypoint given `org/name` first, `hf download`, `snapshot_download`,
TGI's `MODEL_ID`, a Trainer initializer's `hf://` URI), gathers the NetworkPolicies that select the pod and isolate
its egress, KubeRay's own from `networkPolicy.mode` included. When no egress rule admits an address outside the
cluster on TCP 443 (a rule with no `to`, or an `ipBlock` that is not a private range), the download cannot connect.
It is an error when the download lands on storage that starts empty with the pod (an emptyDir, the container's
filesystem), and a warning when it lands on a persistent volume, which may have been filled beforehand (then
`HF_HUB_OFFLINE=1` says so). A container that goes through a proxy or a mirror (`HTTPS_PROXY`, `HF_ENDPOINT`) or is
offline (`HF_HUB_OFFLINE`, `TRANSFORMERS_OFFLINE`) is not reported.

A NetworkPolicy whose pods are not in the files is read alone: an egress rule that admits pods of every namespace
(`namespaceSelector: {}`) on ports 80 and 443 only reads as "the internet over HTTP(S)", which it is not, and is
a warning when no other rule of the policy reaches outside.

## Why is this bad?
`podSelector` and `namespaceSelector` peers match pods of the cluster, never an external address: only an
`ipBlock` admits huggingface.co, S3 or PyPI. The pod starts, its download hangs or fails on connect, and the
server or init container exits; the pod restarts into the same wall until someone reads its log.

## Example
```yaml
kind: NetworkPolicy
spec:
  podSelector: {matchLabels: {app: vllm}}
  policyTypes: [Egress]
  egress:
    - to: [{namespaceSelector: {}}]
      ports: [{protocol: TCP, port: 443}]
```
Use instead:
```yaml
  egress:
    - to: [{ipBlock: {cidr: 0.0.0.0/0, except: [10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16]}}]
      ports: [{protocol: TCP, port: 443}]
```

## Fix
Admit the download's destination with an `ipBlock` on TCP 443 (the Hub's addresses, or `0.0.0.0/0` minus the
cluster's ranges), send it through a proxy the policy admits (`HTTPS_PROXY`), or stage the model beforehand and
set `HF_HUB_OFFLINE=1`.
"""

HTTPS = 443
WEB_PORTS = frozenset({80, 443})
# A proxy or a Hub mirror the container is pointed at: its download goes where the policy may well admit.
ROUTED_ENV = ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "HF_ENDPOINT")


def check(ctx) -> Iterator[Hit]:
    config_maps = config_map_data(ctx)
    selecting: set[int] = set()  # policies that select a pod of these files
    for o, pod_path, pod in ctx.pod_templates():
        isolating = [(p, spec) for p, spec in policies_selecting(ctx, o, pod_path) if "Egress" in policy_types(spec)]
        selecting.update(id(p) for p, _spec in isolating)
        if not isolating:
            continue
        rules = [r for _p, spec in isolating for r in spec.get("egress") or [] if isinstance(r, dict)]
        if any(_reaches_outside(r) for r in rules):
            continue
        for where, c, pulls, into, env in downloads(pod, pod_path, config_maps=config_maps):
            if offline(env) or any(env.get(k) for k in ROUTED_ENV):
                continue
            persistent = _persistent(pod, mount_at(c, into))
            names = ", ".join(dict.fromkeys(f"NetworkPolicy {p.name}" if p is not o else
                                            "the NetworkPolicy KubeRay makes from networkPolicy.mode"
                                            for p, _spec in isolating))
            yield Hit(where, f"{pod_label(o, pod_path)}: container {c.get('name', '?')} downloads {pulls[0].repo} "
                      f"from the Hugging Face Hub ({pulls[0].how}) when it starts, but {names} admit no address "
                      "outside the cluster on TCP 443 (podSelector and namespaceSelector peers match cluster pods "
                      "only): the download cannot connect"
                      + (f" unless {into} on its persistent volume is filled beforehand (then set "
                         "HF_HUB_OFFLINE=1)" if persistent else ""),
                      obj=o, severity=Severity.WARNING if persistent else None)
            break  # one finding per pod
    for p in ctx.of_kind("NetworkPolicy"):
        spec = p.obj.get("spec") if isinstance(p.obj.get("spec"), dict) else {}
        if id(p) in selecting or "Egress" not in policy_types(spec):
            continue
        rules = [r for r in spec.get("egress") or [] if isinstance(r, dict)]
        if any(_reaches_outside(r) for r in rules):
            continue
        for k, r in enumerate(spec.get("egress") or []):
            if isinstance(r, dict) and _every_namespace_on_web_ports(r):
                yield Hit(f"spec.egress.{k}", f"NetworkPolicy {p.name}: this egress rule admits pods of every "
                          "namespace on ports 80/443, never an address outside the cluster (that needs an ipBlock); "
                          "if it is meant for downloads (the Hub, S3, PyPI), they cannot connect", obj=p,
                          severity=Severity.WARNING)


def _tcp_443(port) -> bool:
    return port_entry_admits(port, "TCP", HTTPS)  # no names: a named port names a pod's, no external address's


def _reaches_outside(rule: dict) -> bool:
    """The egress rule admits some address outside the cluster on TCP 443."""
    ports = rule.get("ports")
    if ports and not any(_tcp_443(p) for p in ports):
        return False
    peers = rule.get("to")
    return not peers or any(_public_block(p) for p in peers)


def _public_block(peer) -> bool:
    block = peer.get("ipBlock") if isinstance(peer, dict) else None
    if not isinstance(block, dict):
        return False
    try:
        net = ipaddress.ip_network(str(block.get("cidr")), strict=False)
    except ValueError:
        return True  # unreadable: the object schema's to report; not this rule's to judge
    return net.prefixlen == 0 or not (net.is_private or net.is_loopback or net.is_link_local)


def _every_namespace_on_web_ports(rule: dict) -> bool:
    peers = rule.get("to") or []
    ports = rule.get("ports") or []
    every = any(isinstance(p, dict) and p.get("namespaceSelector") == {} and not p.get("podSelector")
                for p in peers)
    numbers = {p.get("port") for p in ports if isinstance(p, dict)}
    return every and bool(numbers) and numbers <= WEB_PORTS


def _persistent(pod: dict, mount: dict | None) -> bool:
    """The download lands on a volume that outlives the pod (not an emptyDir, not the container's filesystem)."""
    if mount is None:
        return False
    for v in pod.get("volumes") or []:
        if isinstance(v, dict) and v.get("name") == mount.get("name"):
            return not ({"emptyDir", "ephemeral"} & set(v))
    return True  # a StatefulSet's claim template
