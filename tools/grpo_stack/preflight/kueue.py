"""GRPO967: the run's Kueue queue can admit it (global.run.queue): the LocalQueue and its ClusterQueue exist, and
some flavor of the ClusterQueue holds the run's GPUs within its nominal quota plus borrowing limit.

Kueue admits a RayJob or RayCluster whole: every pod set (head, worker group) gets a flavor per resource, and a
pod set's requests must fit the flavor's nominal quota plus what the ClusterQueue may borrow from its cohort. A
ClusterQueue with no cohort borrows nothing; in a cohort with no borrowingLimit it may borrow whatever the cohort
lends, which the API shows no bound of: then this check cannot say `never` and says so. A resource the ClusterQueue
does not cover makes the workload inadmissible unless Kueue's configuration excludes it (resources.
excludeResourcePrefixes, in Kueue's own config file, not in the API): a warning naming that assumption.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

from ..lint.context import LintContext
from ..lint.finding import Severity
from .client import Cluster
from .hit import ClusterHit
from .plan import GPU, pod_groups, quantity

KEY = "global.run.queue"
VERSIONS = ("v1beta2", "v1beta1")  # Kueue v0.17 serves both; v1beta2 is its storage version


def _get(cluster: Cluster, path: str) -> tuple[dict | None, str | None]:
    """The object at the first served version, and that version (None, None: Kueue's API is not served)."""
    for version in VERSIONS:
        if cluster.get(f"/apis/kueue.x-k8s.io/{version}") is None:
            continue
        return cluster.get(f"/apis/kueue.x-k8s.io/{version}/{path}"), version
    return None, None


def _amount(value: Decimal) -> str:
    text = f"{value:f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def queue(cluster: Cluster, ctx: LintContext, notes: list[str]) -> Iterator[ClusterHit]:
    name = ctx.get(KEY)
    if not name or not ctx.component_enabled("raycluster"):
        return
    ns = ctx.namespace
    local, version = _get(cluster, f"namespaces/{ns}/localqueues/{name}")
    if version is None:
        yield ClusterHit("GRPO967", KEY, "Kueue is not installed (the API serves no kueue.x-k8s.io): the queue-name "
                         "label is ignored and a suspended RayJob is never admitted",
                         remediation="install Kueue, or set global.run.queue to \"\"")
        return
    if local is None:
        yield ClusterHit("GRPO967", KEY, f"LocalQueue {ns}/{name} does not exist: Kueue leaves the run suspended",
                         remediation=f"create LocalQueue {name} in {ns}, or name an existing one")
        return
    cq_name = str((local.get("spec") or {}).get("clusterQueue") or "")
    cq, _ = _get(cluster, f"clusterqueues/{cq_name}")
    if cq is None:
        yield ClusterHit("GRPO967", KEY, f"LocalQueue {ns}/{name} points at ClusterQueue {cq_name!r}, which does not "
                         "exist: Kueue leaves the run suspended")
        return
    spec = cq.get("spec") or {}
    cohort = spec.get("cohortName") or spec.get("cohort")
    groups = pod_groups(ctx)
    gpus = sum((g.requests.get(GPU, Decimal(0)) * g.replicas for g in groups), Decimal(0))
    notes.append(f"Kueue {version}: LocalQueue {ns}/{name} -> ClusterQueue {cq_name}"
                 f"{f' (cohort {cohort})' if cohort else ' (no cohort: borrows nothing)'}")
    covered = {r for rg in spec.get("resourceGroups") or [] for r in rg.get("coveredResources") or []}
    wanted = sorted({r for g in groups for r, v in g.requests.items() if v > 0})
    uncovered = [r for r in wanted if r not in covered]
    if GPU in uncovered:
        yield ClusterHit("GRPO967", KEY, f"ClusterQueue {cq_name} covers no {GPU}: the run's {_amount(gpus)} GPUs can "
                         "never be admitted", remediation=f"add {GPU} to a resource group of ClusterQueue {cq_name}")
        return
    if uncovered:
        yield ClusterHit("GRPO967", KEY, f"ClusterQueue {cq_name} covers no {', '.join(uncovered)}, which the Ray pods "
                         "request: Kueue never admits them unless its configuration excludes these resources "
                         "(resources.excludeResourcePrefixes; not visible in the API)", Severity.WARNING)
    if gpus <= 0:
        return
    best, unbounded = Decimal(0), False
    for rg in spec.get("resourceGroups") or []:
        for flavor in rg.get("flavors") or []:
            for res in flavor.get("resources") or []:
                if res.get("name") != GPU:
                    continue
                limit = res.get("borrowingLimit")
                if cohort and limit is None:
                    unbounded = True
                borrow = quantity(limit) if cohort and limit is not None else Decimal(0)
                best = max(best, quantity(res.get("nominalQuota") or 0) + borrow)
    if best >= gpus:
        return
    if unbounded:
        notes.append(f"Kueue: ClusterQueue {cq_name} holds {_amount(best)} GPUs of its own, fewer than the run's "
                     f"{_amount(gpus)}; it may borrow without limit from cohort {cohort}, whose lending the API "
                     "does not bound: admission depends on the other queues' use")
        return
    yield ClusterHit("GRPO967", KEY, f"ClusterQueue {cq_name} can never admit the run: it needs {_amount(gpus)} "
                     f"{GPU}, and the most any flavor holds, nominal quota plus borrowing limit, is {_amount(best)}",
                     remediation=f"raise ClusterQueue {cq_name}'s {GPU} nominalQuota or borrowingLimit to "
                     f"{_amount(gpus)}, or lower global.cluster.nodes")
