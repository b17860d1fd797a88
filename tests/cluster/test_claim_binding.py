"""GRPO864 against the real PersistentVolume controller: every claim its fixtures name a volume for is applied
with that volume to the control plane, and the controller manager decides. A claim the rule reports as an error
stays Pending with the controller's VolumeMismatch or FailedBinding event; a claim of the good fixture is Bound.

Where the check stops: this control plane has no default StorageClass, so the rule's warning (a claim with no
class beside a volume with none, which a default class would break) is checked against the DefaultStorageClass
admission plugin's source only, not run here; the bad fixture that holds it is left out. The rule's other branch,
a claim left to a StorageClass whose CSI driver refuses to provision (FSx for Lustre without `subnetId`, EFS
without `provisioningMode` or a file system id), stops at the drivers' source (their `CreateVolume`, cited in the
rule's docs): the drivers call AWS and cannot run here, so the fixtures of that branch, whose claims name no
volume, are left out too.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from grpo_stack.lint.finding import Severity

from tests.cluster.kube_api import scratch_namespace, wait_for
from tests.lint.fixtures import FIXTURES, lint_fixture

CODE = "GRPO864"
CASES = sorted(p for p in (FIXTURES / CODE).glob("*.yaml") if "default" not in p.name and "provision" not in p.name)


def _objects(path: Path, tag: str, namespace: str) -> tuple[list[dict], list[dict]]:
    """The fixture's volumes and the claims that name one, volumes renamed per test (they are cluster-wide) and
    claims put in the test's namespace, references rewritten to match."""
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
    volumes = [d for d in docs if d["kind"] == "PersistentVolume"]
    claims = [d for d in docs if d["kind"] == "PersistentVolumeClaim"]
    for v in volumes:
        v["metadata"]["name"] = f"{tag}-{v['metadata']['name']}"
        ref = v["spec"].get("claimRef")
        if ref:
            ref["namespace"] = namespace
    claims = [c for c in claims if c["spec"].get("volumeName")]
    for c in claims:
        c["metadata"]["namespace"] = namespace
        c["spec"]["volumeName"] = f"{tag}-{c['spec']['volumeName']}"
    return volumes, claims


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.name)
def test_the_controller_binds_exactly_the_claims_the_rule_passes(control_plane, path):
    result = lint_fixture(path)
    refused = {m.group(1) for f in result.findings if f.code == CODE and f.severity == Severity.ERROR
               for m in [re.match(r"claim (\S+) names PersistentVolume", f.message)] if m}
    tag = f"g864-{path.stem.split('-')[0]}"
    namespace = f"claims-{path.stem.split('-')[0]}"
    volumes, claims = _objects(path, tag, namespace)
    in_set = {v["metadata"]["name"] for v in volumes}
    judged = [c for c in claims if c["spec"]["volumeName"] in in_set]
    assert judged and (refused if path.name.startswith("bad-") else not refused)
    with scratch_namespace(control_plane, namespace) as kube:
        try:
            for v in volumes:
                kube.create(v)
            for c in judged:
                kube.create(c, namespace)
            for c in judged:
                name = c["metadata"]["name"]
                if name in refused:
                    reasons = wait_for(f"the controller's event on claim {name}", lambda name=name: {
                        e["reason"] for e in kube.list("v1", "Event", namespace)
                        if e["involvedObject"]["name"] == name} & {"VolumeMismatch", "FailedBinding"}, timeout=60)
                    assert reasons
                    assert kube.get("v1", "PersistentVolumeClaim", name, namespace)["status"]["phase"] == "Pending"
                else:
                    wait_for(f"claim {name} Bound", lambda name=name: (kube.get(
                        "v1", "PersistentVolumeClaim", name, namespace).get("status") or {}).get("phase") == "Bound",
                        timeout=60)
        finally:
            for v in volumes:
                kube.delete("v1", "PersistentVolume", v["metadata"]["name"])
