"""GRPO618 node-selector-contradiction."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ...catalog.instances import EC2_NAME, lookup
from ..finding import Hit, Severity
from ._objects import values_section
from ._podsecurity import pod_label

CODE = "GRPO618"
NAME = "node-selector-contradiction"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "A pod's node selector or required node affinity excludes the instance type it is pinned to."
DOC = """## What it does
For every pod that names its instance type (`node.kubernetes.io/instance-type` or the deprecated
`beta.kubernetes.io/instance-type`, in `nodeSelector` or as a required node affinity `In`), works out the labels
a node of that type carries — both instance-type labels, and on EC2 names Karpenter's well-known
`karpenter.k8s.aws/instance-family`, `-category`, `-generation`, `-size`, and from the instance catalogue
`-cpu`, `-memory` (MiB) and `-gpu-count` — and checks every `nodeSelector` term and every required node affinity
requirement (`In`, `NotIn`, `Exists`, `DoesNotExist`, `Gt`, `Lt`) on those labels against them. It reports a
pod that no node of any of its instance types can satisfy. Labels not derived from the type (zone, capacity
type, a node group's own labels) are not judged: nothing in the set says which nodes carry them.

In a values file the finding points at the key that adds the term: `global.pod.nodeSelector`,
`<component>.pod.nodeSelector` / `.pod.nodeAffinity`, or `sandbox-fusion.dedicatedNodes.nodeSelector`.

## Why is this bad?
The scheduler sees no contradiction, only no matching node: the pod stays Pending with `0/N nodes are
available: N node(s) didn't match Pod's node affinity/selector`, and Karpenter finds no instance type to
launch. A GPU worker that never schedules is a training run that never starts, discovered after the install.

## Example
```yaml
global:
  cluster:
    gpuInstanceType: p5en.48xlarge
  pod:
    nodeSelector:
      karpenter.k8s.aws/instance-family: p5
```
Use instead:
```yaml
global:
  pod:
    nodeSelector:
      karpenter.k8s.aws/instance-family: p5en
```

## Fix
Drop the term or make it agree with the instance type (the message gives the value that node carries); to pin
one component elsewhere, change its instance type key instead.
"""

TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
KARPENTER = "karpenter.k8s.aws/"
# Karpenter's family name: category letters, generation digits, then attribute letters (`p5en`, `m6i`, `g6e`).
FAMILY = re.compile(r"^([a-z]+)([0-9]+)")


def node_labels(name: str) -> dict[str, str]:
    """The labels a node of this instance type carries, as far as the type's name and the catalogue tell."""
    out = {label: name for label in TYPE_LABELS}
    if name.startswith("ml.") or not EC2_NAME.match(name):
        return out  # a HyperPod node is no Karpenter node; another cloud's name derives nothing
    family, _, size = name.partition(".")
    out[f"{KARPENTER}instance-family"] = family
    out[f"{KARPENTER}instance-size"] = size
    m = FAMILY.match(family)
    if m:
        out[f"{KARPENTER}instance-category"] = m.group(1)
        out[f"{KARPENTER}instance-generation"] = m.group(2)
    row = lookup(name)
    if row:
        out[f"{KARPENTER}instance-cpu"] = str(row.vcpu)
        out[f"{KARPENTER}instance-memory"] = str(round(row.memory_gib * 1024))
        out[f"{KARPENTER}instance-gpu-count"] = str(row.gpus)
    return out


def _integer(text: object) -> int | None:
    try:
        return int(str(text))
    except ValueError:
        return None


def requirement_fails(expr: dict, labels: dict[str, str]) -> str | None:
    """Why a node with these labels fails this requirement, or None (also when the label is not derived)."""
    key, op = expr.get("key"), expr.get("operator")
    values = [str(v) for v in expr.get("values") or []]
    if key not in labels:
        return None
    have = labels[key]
    if op == "In" and have not in values:
        return f"{key} In {values}, but the node's {key} is {have}"
    if op == "NotIn" and have in values:
        return f"{key} NotIn {values}, but the node's {key} is {have}"
    if op == "DoesNotExist":
        return f"{key} DoesNotExist, but every node carries {key}={have}"
    if op in ("Gt", "Lt") and values:
        bound, value = _integer(values[0]), _integer(have)
        if bound is not None and value is not None and ((op == "Gt" and not value > bound)
                                                        or (op == "Lt" and not value < bound)):
            return f"{key} {op} {bound}, but the node's {key} is {value}"
    return None


def _terms(pod: dict) -> list[list[dict]]:
    affinity = pod.get("affinity") if isinstance(pod.get("affinity"), dict) else {}
    node = affinity.get("nodeAffinity") if isinstance(affinity.get("nodeAffinity"), dict) else {}
    required = node.get("requiredDuringSchedulingIgnoredDuringExecution")
    terms = required.get("nodeSelectorTerms") if isinstance(required, dict) else None
    return [[e for e in (t.get("matchExpressions") or []) if isinstance(e, dict)]
            for t in (terms if isinstance(terms, list) else []) if isinstance(t, dict)]


def _candidate_types(selector: dict, terms: list[list[dict]]) -> list[str]:
    named = [str(selector[k]) for k in TYPE_LABELS if selector.get(k)]
    if named:
        return named[:1]
    return [str(v) for term in terms for e in term
            if e.get("key") in TYPE_LABELS and e.get("operator") == "In" for v in e.get("values") or []]


def _problems(name: str, selector: dict, terms: list[list[dict]]) -> list[tuple[str, str]]:
    """(where, why) that keep every node of type `name` away; empty when such a node is admitted."""
    labels = node_labels(name)
    out = [("nodeSelector", f"nodeSelector {k}={v}, but the node's {k} is {labels[k]}")
           for k, v in selector.items() if k in labels and str(v) != labels[k]]
    term_problems = [[why for e in term if (why := requirement_fails(e, labels))] for term in terms]
    if terms and all(term_problems):  # the terms are ORed: every one must fail
        out += [("nodeAffinity", "; ".join(p)) for p in term_problems]
    return out


def check(ctx) -> Iterator[Hit]:
    for o, pod_path, pod in ctx.pod_templates():
        selector = pod.get("nodeSelector") if isinstance(pod.get("nodeSelector"), dict) else {}
        terms = _terms(pod)
        types = _candidate_types(selector, terms)
        per_type = {name: _problems(name, selector, terms) for name in types}
        if not types or not all(per_type.values()):
            continue  # no instance type named, or one of them is admitted
        section = values_section(ctx, o, pod_path)
        for where in dict.fromkeys(w for problems in per_type.values() for w, _ in problems):
            reasons = "; ".join(dict.fromkeys(why for problems in per_type.values() for w, why in problems
                                              if w == where))
            message = f"{pod_label(o, pod_path)}: no {' or '.join(types)} node can run this pod: {reasons}"
            if section and not o.is_test_hook:
                yield Hit(_values_key(ctx, section, where), message)
            else:
                yield Hit(f"{pod_path}.{'nodeSelector' if where == 'nodeSelector' else 'affinity.nodeAffinity'}",
                          message, obj=o)


def _values_key(ctx, section: str, where: str) -> str:
    """The values key that adds the contradicting term: the component's pod, the sandbox's dedicated node group,
    or global.pod."""
    field = "nodeSelector" if where == "nodeSelector" else "nodeAffinity"
    sources = [f"{section}.pod.{field}", "global.pod." + field]
    if field == "nodeSelector" and section == "sandbox-fusion":
        sources.insert(1, "sandbox-fusion.dedicatedNodes.nodeSelector")
    for key in sources:
        if ctx.get(key):
            return key
    return sources[0]
