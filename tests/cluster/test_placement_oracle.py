"""The scheduler as the oracle for grpo-lint's placement rules (GRPO601 node-capacity).

At least 100 seeded variants of the shipped values files (tests/cluster/placement_variants.py) are linted
and rendered once, in-process (one render serves both); each variant's pods are created on the control plane
with kwok nodes made from the instance catalogue per the values, and the real kube-scheduler places them:

- a variant with no placement error must schedule completely;
- a node selector or required affinity that grpo-lint says no node of the instance type satisfies (GRPO618) must
  leave that pod Pending as not matching its node affinity/selector;
- each placement error (a pod's CPU, memory, GPUs or EFA beyond its instance type) must leave a pod of the
  object it names Pending, with the scheduler's own reason for that resource ("Insufficient cpu", ...) in the
  PodScheduled condition; a partial-EFA request (flagged, it wastes interfaces) must still schedule;
- no pod is Pending that no finding explains.

The cluster model (said once, here): GPU workers get `global.cluster.nodes` nodes of `gpuInstanceType`; every
other pod gets a node of its own of the instance type it selects (the autoscaled CPU pools Karpenter or a
managed node group give), with the labels and taints of `sandbox-fusion.dedicatedNodes` where set. Nodes carry
EKS's and Karpenter's well-known labels of their type (grpo_stack/localcluster/nodes.py, from Karpenter's documented
naming), never a label copied from the pod's own selector.

Where the check stops: pods are made from the rendered pod templates as their controllers would make them
(labels from lint/controllers.py, the KubeRay operator's own pod building is tested by the helm-install tier),
in a namespace without Pod Security so that only placement decides. Variants run in batches, each on nodes
labelled with its name and selected by its pods only.
"""

from __future__ import annotations

import copy
import re
import tempfile
import time
from collections import Counter
from pathlib import Path

import pytest
from grpo_stack.catalog.instances import lookup
from grpo_stack.lint.engine import lint_values_many
from grpo_stack.localcluster import nodes
from grpo_stack.localcluster.prerequisites import install_prerequisites
from grpo_stack.preflight.plan import EFA, GPU, pod_groups

from tests.cluster.kube_api import Kube, wait_for
from tests.cluster.placement_variants import variants

NS = "placement-oracle"
VARIANT_LABEL = "grpo-stack.test/variant"
BATCH = 20
WELL_KNOWN = ("karpenter.", "topology.kubernetes.io/", "kubernetes.io/", "node.kubernetes.io/", "beta.kubernetes.io/")
RESOURCE_OF = {"cpu": "cpu", "memory": "memory", "gpusPerNode": GPU, "efaPerNode": EFA}
# The unit a finding at an instance-type key names in its message ("requests 8 GPUs; g6e.12xlarge has 4").
MESSAGE_UNITS = ((" GPUs", "gpusPerNode"), (" EFA", "efaPerNode"), (" CPU", "cpu"), (" GiB", "memory"))
# GRPO618 (node-selector-contradiction): "RayCluster grpo-ray (worker group): no p5.48xlarge node can run this pod"
CONTRADICTED = re.compile(r"^(\w+ \S+?)(?: \((head|worker group)\))?: no \S+ node can run")
AFFINITY = "affinity"
# The scheduler's reason per resource in the PodScheduled condition.
REASON = {AFFINITY: "didn't match Pod's node affinity/selector"}
OWNER = re.compile(r"^(\w+) (\S+) (?:requests|spans)")
# Disagreements that are documented limits, by variant name -> why. Empty: every disagreement found so far was
# a bug, and was fixed in lint/rules.
LIMITS: dict[str, str] = {}


def expected_pending(findings) -> list[tuple[str, str]]:
    """(owner "Kind name", resource) for every GRPO601 error that says a pod cannot fit its instance type."""
    out = []
    for f in findings:
        if f.code == "GRPO618" and f.severity.value == "error":
            owner = CONTRADICTED.match(f.message)
            out.append((f"{owner.group(1)}{', ' + owner.group(2) if owner.group(2) else ''}", AFFINITY) if owner
                       else (f.message, "?"))
            continue
        if f.code != "GRPO601" or f.severity.value != "error" or "partial EFA" in f.message:
            continue
        owner = OWNER.match(f.message)
        leaf = f.key_path.rsplit(".", 1)[-1]
        if leaf not in RESOURCE_OF:  # at the instance type's key (vllm.instanceType): the message names the unit
            leaf = next((k for word, k in MESSAGE_UNITS if word in f.message), leaf)
        if owner and leaf in RESOURCE_OF:
            # A RayCluster finding names the group by its key: the head's or the GPU workers' values.
            group = ", head" if f.key_path.startswith("raycluster.head.") else \
                ", worker group" if f.key_path.startswith(("raycluster.worker.", "global.cluster.")) else ""
            out.append((f"{owner.group(1)} {owner.group(2)}{group}", RESOURCE_OF[leaf]))
        else:
            out.append((f.message, "?"))
    return out


def plan_variant(index: int, ctx) -> tuple[list[dict], list[tuple[dict, str]]]:
    """(nodes, [(pod, owner)]) for one variant, per the cluster model in the module docstring."""
    node_list, pods = [], []
    tag = f"v{index:03d}"
    for g, group in enumerate(pod_groups(ctx)):
        selector = dict(group.spec.get("nodeSelector") or {})
        itype = selector.pop(nodes.INSTANCE_TYPE_LABEL, None) or "m6i.4xlarge"
        # A node carries its type's own labels; only a pool's labels (a dedicated group's) come from the selector,
        # so a selector that contradicts the type finds no node.
        own = nodes.node_object("probe", itype)["metadata"]["labels"]
        selector = {k: v for k, v in selector.items() if k not in own and not k.startswith(WELL_KNOWN)}
        extra_taints = [_taint(t) for t in group.spec.get("tolerations") or [] if _taint(t)]
        gpu_workers = group.values_key == "global.cluster.gpuInstanceType"
        count = int(ctx.get("global.cluster.nodes")) if gpu_workers else group.replicas
        for n in range(count):
            name = f"{tag}-g{g}-{n}"
            taints = ([dict(nodes.GPU_TAINT)] if lookup(itype).gpus else []) + extra_taints
            node_list.append(nodes.node_object(name, itype, labels={**selector, VARIANT_LABEL: tag}, taints=taints))
        obj, path = group.source
        labels = {k: (sorted(v)[0] if isinstance(v, frozenset) else v) for k, v in ctx.pod_labels(obj, path).items()}
        for r in range(group.replicas):
            spec = copy.deepcopy(group.spec)
            spec.pop("serviceAccountName", None)
            spec.pop("serviceAccount", None)
            spec["nodeSelector"] = {**(spec.get("nodeSelector") or {}), VARIANT_LABEL: tag}
            pod = {"apiVersion": "v1", "kind": "Pod",
                   "metadata": {"name": f"{tag}-g{g}-{r}", "labels": {**labels, VARIANT_LABEL: tag}}, "spec": spec}
            pods.append((pod, group.owner))
    return node_list, pods


def _taint(toleration: dict) -> dict | None:
    """The taint a dedicated node group carries for this toleration (the GPU taint comes with GPU nodes)."""
    key = toleration.get("key")
    if not key or key == GPU or not toleration.get("effect"):
        return None
    taint = {"key": key, "effect": toleration["effect"]}
    if toleration.get("operator", "Equal") == "Equal":
        taint["value"] = toleration.get("value", "")
    return taint


@pytest.fixture(scope="module")
def oracle_ns(control_plane):
    control_plane.create_namespace(NS, enforce="privileged", warn="privileged")
    install_prerequisites(control_plane, NS)
    kube = Kube(control_plane.kubeconfig)
    yield kube
    kube.delete_collection("v1", "Pod", NS, label_selector=VARIANT_LABEL)
    kube.delete_collection("v1", "Node", None, label_selector=VARIANT_LABEL)
    # The next module's node counts (the preflight's GPU cases use some of these types) must not see them.
    wait_for("the oracle's nodes gone", lambda: not kube.list("v1", "Node", label_selector=VARIANT_LABEL),
             timeout=120, every=0.5)
    kube.delete("v1", "Namespace", NS)
    kube.close()


def place(kube: Kube, batch: list[tuple[int, object]]) -> dict[int, list[tuple[str, str, str]]]:
    """Create the batch's nodes, wait until schedulable, create its pods, wait until each is bound or refused.
    Returns index -> [(owner, node or "", PodScheduled message)] per pod."""
    owners: dict[str, tuple[int, str]] = {}
    all_nodes, all_pods = [], []
    for index, ctx in batch:
        node_list, pods = plan_variant(index, ctx)
        all_nodes += node_list
        for pod, owner in pods:
            owners[pod["metadata"]["name"]] = (index, owner)
            all_pods.append(pod)
    for node in all_nodes:
        kube.create(node)
    names = {n["metadata"]["name"] for n in all_nodes}

    def schedulable() -> bool:
        ready = [n for n in kube.list("v1", "Node", label_selector=VARIANT_LABEL)
                 if n["metadata"]["name"] in names and _ready(n)]
        return len(ready) == len(names)
    wait_for("the batch's nodes Ready and untainted", schedulable, timeout=120, every=0.5)
    for pod in all_pods:
        kube.create(pod, NS)

    def settled():
        got = kube.list("v1", "Pod", NS, label_selector=VARIANT_LABEL)
        done = [p for p in got if p["metadata"]["name"] in owners and _decided(p)]
        return got if len(done) == len(owners) else None
    got = wait_for("every pod bound or refused by the scheduler", settled, timeout=180, every=0.5)
    out: dict[int, list] = {}
    for p in got:
        index, owner = owners[p["metadata"]["name"]]
        cond = next((c for c in (p.get("status") or {}).get("conditions") or [] if c["type"] == "PodScheduled"), {})
        out.setdefault(index, []).append((owner, (p.get("spec") or {}).get("nodeName") or "", cond.get("message", "")))
    kube.delete_collection("v1", "Pod", NS, label_selector=VARIANT_LABEL)
    wait_for("the batch's pods gone", lambda: not kube.list("v1", "Pod", NS, label_selector=VARIANT_LABEL),
             timeout=120, every=0.5)
    kube.delete_collection("v1", "Node", None, label_selector=VARIANT_LABEL)
    return out


def _ready(node: dict) -> bool:
    conditions = (node.get("status") or {}).get("conditions") or []
    taints = (node.get("spec") or {}).get("taints") or []
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions) and \
        not any(t["key"].startswith("node.kubernetes.io/") for t in taints)


def _decided(pod: dict) -> bool:
    if (pod.get("spec") or {}).get("nodeName"):
        return True
    return any(c["type"] == "PodScheduled" and c["status"] == "False" and c.get("reason") == "Unschedulable"
               for c in (pod.get("status") or {}).get("conditions") or [])


def verdict(expected: list[tuple[str, str]], placed: list[tuple[str, str, str]], partial_efa: bool) -> tuple[str, str]:
    """(row of the agreement table, why when it disagrees)."""
    pending = [(owner, msg) for owner, node, msg in placed if not node]
    if not expected:
        row = "passes: scheduled completely" if not pending else "DISAGREE passes, but Pending"
        if partial_efa and not pending:
            row = "partial EFA (flagged, not a fit): scheduled"
        return row, "" if not pending else f"{pending[0][0]}: {pending[0][1]}"
    def reasons(o: str, r: str) -> list[str]:
        # The scheduler names the first filter a node fails: node affinity before resources, so a pod whose
        # selector no node satisfies is reported for that, whatever else it lacks.
        out = [REASON.get(r, f"Insufficient {r}")]
        return out + [REASON[AFFINITY]] if (o, AFFINITY) in expected else out
    missing = [(o, r) for o, r in expected
               if not any(owner.startswith(o) and any(text in msg for text in reasons(o, r))
                          for owner, msg in pending)]
    unexplained = [(owner, msg) for owner, msg in pending if not any(owner.startswith(o) for o, _ in expected)]
    if missing:
        return "DISAGREE flagged, but not Pending for that reason", f"{missing[0]} vs pending {pending[:2]}"
    if unexplained:
        return "DISAGREE flagged, and a pod no finding names is Pending", f"{unexplained[0]}"
    return "flagged: Pending for the reason named", ""


def test_scheduler_agrees_with_placement_rules(oracle_ns, capsys):
    started = time.monotonic()
    vs = variants()
    folder = Path(tempfile.mkdtemp(prefix="placement-oracle-"))
    results = list(lint_values_many([v.files(folder) for v in vs]))
    usable = [(i, v, r) for i, (v, r) in enumerate(zip(vs, results, strict=True)) if not r.input_errors]
    assert len(usable) >= 100, f"only {len(usable)} variants are usable values"
    flagged = [i for i, _, r in usable if expected_pending(r.findings)]
    assert len(flagged) * 3 >= len(usable), f"only {len(flagged)} of {len(usable)} flagged for placement"
    placed: dict[int, list] = {}
    for start in range(0, len(usable), BATCH):
        chunk = usable[start:start + BATCH]
        placed.update(place(oracle_ns, [(i, r.context) for i, _, r in chunk]))
    table: Counter = Counter()
    disagreements = []
    for i, v, r in usable:
        partial = any(f.code == "GRPO601" and "partial EFA" in f.message for f in r.findings)
        row, why = verdict(expected_pending(r.findings), placed.get(i, []), partial)
        if row.startswith("DISAGREE") and v.name in LIMITS:
            row = f"documented limit: {row[9:]}"
        table[row] += 1
        if row.startswith("DISAGREE"):
            disagreements.append(f"{v.name}: {row}: {why}")
    with capsys.disabled():
        print(f"\nscheduler oracle: {len(usable)} variants ({len(vs) - len(usable)} refused as input), "
              f"{len(flagged)} flagged for placement, {time.monotonic() - started:.0f}s")
        for row, n in sorted(table.items()):
            print(f"  {n:4d}  {row}")
        agree = sum(n for row, n in table.items() if not row.startswith("DISAGREE"))
        print(f"  agreement {agree}/{len(usable)}")
    assert not disagreements, "\n".join(disagreements)
