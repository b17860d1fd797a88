"""GRPO868 against the real HorizontalPodAutoscaler controller: the HPAs of each fixture are applied to the local
control plane beside the workloads they scale, and the controller manager decides. Where the rule reports two HPAs
on one workload, the controller marks them `ScalingActive=False` with reason `AmbiguousSelector`; where it reports
nothing, no HPA gets that reason.

Where the check stops: KEDA is not part of this control plane, so a ScaledObject beside an HPA (the rule's other
branch, and the `transfer-hpa-ownership` exception) is checked against KEDA's source only (its ScaledObject
webhook's "already managed by the hpa" refusal, and the HPA of its own it creates for each ScaledObject), not run;
the fixtures' ScaledObjects are left out here. Nor does this control plane run the VerticalPodAutoscaler (a CRD and
its recommender and updater from the autoscaler project): a VPA beside an HPA on CPU or memory is checked against the
VPA's documented limit only, and the `vpa` fixtures are left out.
"""

from __future__ import annotations

import time
from contextlib import ExitStack

import pytest
import yaml

from tests.cluster.kube_api import scratch_namespace, wait_for
from tests.lint.fixtures import FIXTURES, lint_fixture

CODE = "GRPO868"
CASES = sorted(p for p in (FIXTURES / CODE).glob("*.yaml") if "scaledobject" not in p.name and "vpa" not in p.name)
IMAGE = "registry.k8s.io/pause:3.10"
# The controller manager's --horizontal-pod-autoscaler-sync-period (its default, 15 s) and a margin for a loaded
# machine: every HPA is judged again within it.
RESYNC_S = 25


def _workload(kind: str, name: str) -> dict:
    labels = {"app": name}
    spec = {"replicas": 1, "selector": {"matchLabels": labels}, "template": {
        "metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": IMAGE, "resources": {
            "requests": {"cpu": "100m", "memory": "64Mi"}}}]}}}
    if kind == "StatefulSet":
        spec["serviceName"] = name
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name}, "spec": spec}


def _scaling_active(hpa: dict) -> dict:
    for cond in (hpa.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "ScalingActive":
            return cond
    return {}


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.name)
def test_the_hpa_controller_refuses_exactly_the_pairs_the_rule_reports(control_plane, path):
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
    hpas = [d for d in docs if d["kind"] == "HorizontalPodAutoscaler"]
    names = {h["metadata"]["name"] for h in hpas}
    reported = {f.message.split(" scales ")[0].split()[-1] for f in lint_fixture(path).findings if f.code == CODE}
    reported &= names  # the HPAs the rule names; a ScaledObject's finding needs KEDA (above)
    assert hpas and bool(reported) == path.name.startswith("bad-")
    stem = path.stem.split("-")[0]
    spaces = sorted({h["metadata"].get("namespace", "default") for h in hpas})
    mapped = {ns: f"g868-{stem}-{ns}"[:63] for ns in spaces}
    with ExitStack() as stack:
        kubes = {ns: stack.enter_context(scratch_namespace(control_plane, name)) for ns, name in mapped.items()}
        for h in hpas:
            ns = h["metadata"].get("namespace", "default")
            ref = h["spec"]["scaleTargetRef"]
            if kubes[ns].get("apps/v1", ref["kind"], ref["name"], mapped[ns]) is None:
                kubes[ns].create(_workload(ref["kind"], ref["name"]), mapped[ns])
            h = {**h, "metadata": {**h["metadata"], "namespace": mapped[ns]}}
            kubes[ns].create(h, mapped[ns])

        def reasons() -> dict[str, str] | None:
            """Each HPA's ScalingActive reason, once every HPA has one."""
            conds = {h["metadata"]["name"]: _scaling_active(kubes[h["metadata"].get("namespace", "default")].get(
                "autoscaling/v2", "HorizontalPodAutoscaler", h["metadata"]["name"],
                mapped[h["metadata"].get("namespace", "default")])) for h in hpas}
            if not all(c.get("reason") for c in conds.values()):
                return None
            return {name: c["reason"] for name, c in conds.items()}

        # The controller learns an HPA's selector only when it first judges that HPA: the first of two twins judged
        # sees no conflict (FailedGetResourceMetric here) and keeps that reason until its next pass, a sync period
        # later (a reason change keeps the condition's lastTransitionTime, so the time cannot tell). Once every HPA
        # has a reason every selector is known, and a reason read a whole sync period after that is a verdict.
        wait_for("every HPA's ScalingActive condition", reasons, timeout=90, every=1)
        time.sleep(RESYNC_S)
        got = reasons()
        ambiguous = {name for name, reason in got.items() if reason == "AmbiguousSelector"}
        assert bool(ambiguous) == bool(reported), got
        assert reported <= ambiguous, (reported, got)
