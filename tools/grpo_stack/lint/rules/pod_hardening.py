"""GRPO809 pod-hardening."""

from __future__ import annotations

from collections.abc import Iterator

from ...errors import InputError
from ..finding import Hit, Severity
from . import capabilities, network_policy_coverage, no_privilege_escalation, pod_seccomp, service_account_token
from ._podsecurity import folded, pod_label

CODE = "GRPO809"
NAME = "pod-hardening"
SEVERITY = Severity.WARNING
CATEGORY = "hardening"
SUMMARY = ("Manifest mode: a pod lacks Pod Security hardening (seccomp, privilege escalation, capabilities, "
           "service-account token, NetworkPolicy); one warning per pod listing what is missing.")
DOC = """## What it does
On manifests another project wrote (grpo-lint given Kubernetes objects, not values), runs the pod-hardening checks
GRPO810 pod-seccomp, GRPO811 no-privilege-escalation, GRPO812 capabilities, GRPO813 service-account-token and
GRPO816 network-policy-coverage, and reports what they find as one warning per pod template, listing each missing
piece. The chart's own rendered output (values mode) is held to each of those rules as an error, as before.

Config (`.grpo-lint.yaml`): `pod-hardening: {each: true}` holds manifests to each of the five rules too (one
error per finding, as in values mode), for a project that has hardened its own manifests.

## Why is this bad?
Each missing piece widens what a compromised process in the pod can reach (see the five rules). But nearly every
pod written outside a hardened chart misses most of them, and one error per rule per container buries the
findings that stop a run; one warning per pod keeps the hardening work visible without drowning the rest.

## Example
```yaml
kind: Deployment
spec:
  template:
    spec:
      containers: [{name: vllm, image: vllm/vllm-openai:v0.10.1}]
```
Use instead:
```yaml
    spec:
      automountServiceAccountToken: false
      securityContext: {seccompProfile: {type: RuntimeDefault}}
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.1
          securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: ["ALL"]}}
```
plus a NetworkPolicy that selects the pod for ingress and egress.

## Fix
Add what the warning lists (`grpo-lint explain GRPO810` ... `GRPO816` say how), or
`--ignore hardening` to leave hardening out of the report.
"""

CONFIG_KEY = "pod-hardening"  # `.grpo-lint.yaml`: `pod-hardening: {each: true}`


def read_config(section: object, file: str) -> dict[str, bool]:
    """`{each: true}`: hold manifests to each pod-hardening rule, as the chart's own output is."""
    if section is None:
        return {}
    if not isinstance(section, dict) or set(section) - {"each"} or not isinstance(section.get("each", False), bool):
        raise InputError(file, "expected a mapping `{each: true|false}`", key_path=CONFIG_KEY)
    return {"each": section.get("each", False)}


FOLDED = (pod_seccomp, no_privilege_escalation, capabilities, service_account_token, network_policy_coverage)


def check(ctx) -> Iterator[Hit]:
    if not folded(ctx):
        return
    pods = [(o, pod_path) for o, pod_path, _pod in ctx.pod_templates()]
    by_object: dict[int, list[tuple]] = {}
    for o, pod_path in pods:
        by_object.setdefault(id(o), []).append((o, pod_path))
    missing: dict[tuple[int, str], list[str]] = {}
    for rule in FOLDED:
        for hit in rule.hits(ctx):
            pod = _pod_of(hit, by_object.get(id(hit.obj), []))
            if pod is None:
                continue
            o, pod_path = pod
            detail = hit.message.removeprefix(pod_label(o, pod_path)).lstrip(": ")
            missing.setdefault((id(o), pod_path), []).append(f"{detail} ({rule.CODE})")
    for o, pod_path in pods:
        found = missing.get((id(o), pod_path))
        if found:
            yield Hit(pod_path, f"{pod_label(o, pod_path)} lacks Pod Security hardening: {'; '.join(found)}",
                      obj=o)


def _pod_of(hit: Hit, pods: list[tuple]) -> tuple | None:
    """The pod template a hit is about: of its object's pods (`pods`), the longest pod path its key path starts
    with."""
    best = None
    for o, pod_path in pods:
        if o is hit.obj and (hit.key_path == pod_path or hit.key_path.startswith(pod_path + ".")):
            if best is None or len(pod_path) > len(best[1]):
                best = (o, pod_path)
    return best
