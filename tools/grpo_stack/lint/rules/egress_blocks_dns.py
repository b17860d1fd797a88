"""GRPO853 egress-blocks-dns."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity
from ._podsecurity import namespace_of, pod_label, policies_selecting, policy_types, port_entry_admits

CODE = "GRPO853"
NAME = "egress-blocks-dns"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "NetworkPolicies isolate a pod's egress and allow traffic out, but not DNS (UDP 53) to the cluster's DNS."
DOC = """## What it does
For each pod template (any controller), gathers the NetworkPolicies that select it and isolate its egress
(`policyTypes` with `Egress`, or egress rules), counting the policy KubeRay makes from `networkPolicy.mode:
DenyAll` / `DenyAllEgress` (which allows only the cluster's own pods and the listed `egressRules`). Egress
rules are additive across policies. When they allow the pod some egress but no rule admits UDP port 53
(or any port) to a destination that can be the cluster DNS — any destination, an `ipBlock`, or a
`namespaceSelector` — it is reported. A pod whose egress is denied outright (no rule at all) is isolated on
purpose and not reported, nor is one whose rules only allow `ipBlock`s (it talks to addresses, not names).
A rule for TCP 53 alone does not count: resolvers ask over UDP.

## Why is this bad?
Every name the pod looks up, Service names included, times out: the Ray worker never finds the head, the
trainer never reaches its rendezvous, the Hub download never starts. KubeRay's generated policy does not add
DNS either (its source says so: the operator does not assume how the cluster's DNS is deployed).

## Example
```yaml
kind: NetworkPolicy
spec:
  podSelector: {matchLabels: {app: trainer}}
  policyTypes: [Egress]
  egress:
    - to: [{podSelector: {matchLabels: {app: redis}}}]
```
Use instead:
```yaml
  egress:
    - to: [{podSelector: {matchLabels: {app: redis}}}]
    - to: [{namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: kube-system}},
            podSelector: {matchLabels: {k8s-app: kube-dns}}}]
      ports: [{protocol: UDP, port: 53}, {protocol: TCP, port: 53}]
```

## Fix
Add an egress rule to the cluster DNS on UDP and TCP 53 (to `kube-system`'s `k8s-app: kube-dns` pods, or the
node-local DNS address as an `ipBlock`); for KubeRay's `networkPolicy`, list it in `head.egressRules` and
`worker.egressRules`.
"""

DNS_PORT_NAMES = frozenset({"53", "dns", "dns-udp", "domain"})


def _udp_53(port: dict) -> bool:
    return port_entry_admits(port, "UDP", 53, DNS_PORT_NAMES)


def _dns_peer(peer: dict, policy_ns: str) -> bool:
    return isinstance(peer, dict) and ("ipBlock" in peer or "namespaceSelector" in peer or policy_ns == "kube-system")


def _allows_dns(rule: dict, policy_ns: str) -> bool:
    ports = rule.get("ports")
    if ports and not any(_udp_53(p) for p in ports):
        return False
    peers = rule.get("to")
    return not peers or any(_dns_peer(p, policy_ns) for p in peers)


def _ip_only(rule: dict) -> bool:
    peers = rule.get("to") or []
    return bool(peers) and all(isinstance(p, dict) and set(p) == {"ipBlock"} for p in peers)


def check(ctx) -> Iterator[Hit]:
    blocked: dict[tuple[int, str], tuple[object, str, list[str]]] = {}  # one finding per policy, naming its pods
    for o, pod_path, _pod in ctx.pod_templates():
        isolating = [(p, spec) for p, spec in policies_selecting(ctx, o, pod_path) if "Egress" in policy_types(spec)]
        if not isolating:
            continue
        rules = [(p, r) for p, spec in isolating for r in spec.get("egress") or [] if isinstance(r, dict)]
        if not rules or all(_ip_only(r) for _p, r in rules):
            continue
        if any(_allows_dns(r, namespace_of(p, ctx.namespace)) for p, r in rules):
            continue
        policy = next((p for p, _s in isolating if p is not o), o)
        if policy is o:  # KubeRay's own policy, made from the cluster's networkPolicy
            where = pod_path.split(".headGroupSpec")[0].split(".workerGroupSpecs")[0]
            path = "spec.networkPolicy" if where == "spec" else f"{where}.networkPolicy"
            names = "the NetworkPolicy KubeRay makes from networkPolicy.mode"
        else:
            spec = policy.obj.get("spec") if isinstance(policy.obj.get("spec"), dict) else {}
            path = "spec.egress" if spec.get("egress") else "spec.policyTypes"
            names = ", ".join(f"NetworkPolicy {p.name}" for p, _s in isolating if p is not o)
        entry = blocked.setdefault((id(policy), path), (policy, names, []))
        entry[2].append(pod_label(o, pod_path))
    for (_id, path), (policy, names, pods) in blocked.items():
        shown = ", ".join(dict.fromkeys(pods))
        yield Hit(path, f"{names}: {shown} may send traffic out but not to DNS (UDP 53); every name it looks up "
                  "fails", obj=policy)
