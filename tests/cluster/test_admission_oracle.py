"""The API server as the oracle for grpo-lint's object validation.

Objects rendered from every shipped values file (in-process, once each) are mutated by the classes in
tests/cluster/admission_mutations.py (invalid names, label keys and values, quantities, ports, CIDRs,
selectors that no longer match their template, ... and valid edge cases beside each) and sampled with a fixed
seed. Each mutated object is linted alone as a manifest (grpo-lint's manifest mode) and sent to the API server as
a server-side dry run (`dryRun=All`: admission and validation run, nothing is stored):

- every object grpo-lint passes (no error finding beyond those of the unmutated object) must be admitted;
- every object the API server refuses must get a grpo-lint error at the key the refusal names (its `causes`
  field paths; one is a prefix of the other).

A custom resource that embeds pods (a RayCluster's groups) is admitted by its CRD schema alone; the API server
refuses its pods later, when the operator creates them. So each embedded template is also sent as a Pod (its
metadata and spec as written) and the Pod's refusal counts as the resource's, at the template's key. Where that
check stops: the Pod lacks what KubeRay adds when it builds one (its env, ports, the /dev/shm volume, labels);
the operator's real pods for the unmutated releases are checked in test_grpo_run.py.

Refusal classes grpo-lint has no check for yet are documented limits (MISSING, each with why); a limit that
stops disagreeing fails the test, so the list shrinks as checks land. Where the check stops: the namespace has
no Pod Security enforcement (the helm-install tier checks that claim), and the ServiceAccounts the objects name
exist, so only the objects' own validity decides.
"""

from __future__ import annotations

import copy
import json
import re
import tempfile
import time
from collections import Counter
from pathlib import Path

import pytest
import yaml
from grpo_stack.apivalidation.podspecs import find_pod_specs
from grpo_stack.lint.context import node_at
from grpo_stack.lint.engine import lint_values
from grpo_stack.lint.release import lint_manifests
from kubernetes.dynamic.exceptions import ApiException

from tests.cluster.admission_mutations import sample
from tests.cluster.kube_api import Kube, scratch_namespace
from tests.cluster.placement_variants import EVAL, ROOT, TRAINING

NS = "admission-oracle"
SAMPLES = 320
# Refusal classes grpo-lint does not check yet, each with why: a documented limit. The test fails when one stops
# disagreeing, so this list only shrinks. Empty: every class the mutations make is restated by
# grpo_stack.apivalidation (names, labels, quantities, ports, CIDRs, selectors, enums, counts, env names, mounts).
MISSING: dict[str, str] = {}


def releases() -> list[dict]:
    objects = []
    for files in [[f] for f in TRAINING] + [["values/qwen3-8b.yaml", EVAL]]:
        result = lint_values([str(ROOT / f) for f in files], namespace=NS)
        objects += [o.obj for o in result.context.objects]
    unique = {}
    for o in objects:  # the same object from several values files once (same kind, name and content)
        unique.setdefault(json.dumps(o, sort_keys=True), o)
    return list(unique.values())


def lint_errors(obj: dict, folder: Path, tag: str, crd: str | None = None) -> set[tuple[str, str]]:
    """New-or-old error findings of grpo-lint on the object alone, with the KubeRay CRD as `make main` gives it."""
    path = folder / f"{tag}.yaml"
    path.write_text(yaml.safe_dump(obj, sort_keys=False))
    result = lint_manifests(str(path), kuberay_crd=crd)
    if result.input_errors:
        return {("input", e.key_path or "") for e in result.input_errors}
    return {(f.code, f.key_path) for f in result.findings if f.severity.value == "error"}


def dry_run(kube: Kube, obj: dict) -> list[str] | None:
    """None when admitted; else the refusal's field paths (list indices as dots), or [message] without any."""
    try:
        kube.create(obj, NS, dry_run=True)
        return None
    except ApiException as exc:
        try:
            status = json.loads(exc.body)
        except (TypeError, ValueError):
            return [str(exc.body)]
        causes = (status.get("details") or {}).get("causes") or []
        # spec.containers[0].resources.limits[nvidia.com/gpu] -> spec.containers.0.resources.limits.nvidia.com/gpu;
        # a pod template's metadata is named without `metadata` (spec.template.labels): put it back
        fields = [re.sub(r"\.template\.(labels|annotations)\b", r".template.metadata.\1",
                         re.sub(r"\[([^\]]+)\]", r".\1", c.get("field", ""))) for c in causes if c.get("field")]
        return fields or [status.get("message", "")]


def pod_dry_run(kube: Kube, obj: dict) -> list[str] | None:
    """The refusals of the Pods a custom resource's templates become, as the resource's field paths."""
    if "." not in obj["apiVersion"].partition("/")[0]:
        return None
    refused: list[str] = []
    for where, spec in find_pod_specs(obj):
        template = node_at(obj, where.rpartition(".")[0]) if where.endswith(".spec") else None
        meta = dict((template or {}).get("metadata") or {})
        meta.update(name="oracle-pod", namespace=NS)
        fields = dry_run(kube, {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})
        for f in fields or []:
            if f.startswith("spec."):
                refused.append(f"{where}.{f[5:]}")
            elif f.startswith("metadata.") and template is not None:
                refused.append(f"{where.rpartition('.')[0]}.{f}")
            else:
                refused.append(f)
    return refused or None


def at_key(lint_keys: set[str], api_fields: list[str]) -> bool:
    def prefix(a: str, b: str) -> bool:
        return a == b or a.startswith(b + ".") or b.startswith(a + ".")
    return any(prefix(k, f) for k in lint_keys for f in api_fields)


@pytest.fixture(scope="module")
def admission_ns(control_plane):
    with scratch_namespace(control_plane, NS) as kube:
        yield kube


def test_api_server_agrees_with_object_validation(admission_ns, raycluster_crd, capsys):
    started = time.monotonic()
    crd = raycluster_crd
    kube = admission_ns
    objects = releases()
    for o in objects:
        o.setdefault("metadata", {})["namespace"] = NS
        if o["kind"] == "ServiceAccount":  # the ones pods name: a refusal is then about the object itself
            kube.apply_once(o, NS)
    folder = Path(tempfile.mkdtemp(prefix="admission-oracle-"))
    baseline_refused = [f"{o['kind']} {o['metadata']['name']}: {r}" for o in objects
                        if (r := dry_run(kube, o) or pod_dry_run(kube, o))]
    assert not baseline_refused, baseline_refused
    baseline = {i: lint_errors(o, folder, f"base-{i}", str(crd)) for i, o in enumerate(objects)}
    table: Counter = Counter()
    per_class: dict[str, Counter] = {}
    disagreements = []
    for n, (i, m) in enumerate(sample(objects, SAMPLES)):
        new = lint_errors(m.obj, folder, f"m{n}", str(crd)) - baseline[i]
        refused = dry_run(kube, m.obj) or pod_dry_run(kube, m.obj)
        keys = {k for _, k in new}
        if refused is None:
            row = "admitted, lint passes" if not new else "admitted, lint errs (stricter than the API)"
        elif not any(f.startswith(("metadata", "spec", "data", "rules", "roleRef", "subjects")) for f in refused):
            # Refused while decoding (a quantity that does not parse): the API names no field to compare.
            row = "refused (no field named), lint errs" if new else "DISAGREE refused (no field named), lint passes"
        elif at_key(keys, refused):
            row = "refused, lint error at its key"
        elif new:
            row = "DISAGREE refused, lint error elsewhere"
        else:
            row = "DISAGREE refused, lint passes"
        if m.cls.startswith("valid:") and row == "admitted, lint errs (stricter than the API)":
            row = "DISAGREE valid and admitted, lint errs"  # a false error on a spelling the API server takes
        if row.startswith("DISAGREE") and m.cls in MISSING:
            row = f"documented limit: {row[9:]}"
        table[row] += 1
        per_class.setdefault(m.cls, Counter())[row] += 1
        if row.startswith("DISAGREE"):
            disagreements.append(f"{m.cls} ({objects[i]['kind']} {m.path}): {row[9:]}; API: {refused}; "
                                 f"lint: {sorted(new)}")
    with capsys.disabled():
        print(f"\nadmission oracle: {sum(table.values())} mutated objects of {len(objects)} rendered, "
              f"{len(per_class)} classes, {time.monotonic() - started:.0f}s")
        for row, count in sorted(table.items()):
            print(f"  {count:4d}  {row}")
        for cls, rows in sorted(per_class.items()):
            print(f"    {cls}: " + ", ".join(f"{k} {v}" for k, v in sorted(rows.items())))
    stale = [c for c in MISSING if c in per_class and not any(r.startswith("documented") for r in per_class[c])]
    assert not stale, f"documented limits that no longer disagree (remove them from MISSING): {stale}"
    assert not disagreements, "\n".join(disagreements)


def test_a_statefulset_mount_may_name_its_claim_template(admission_ns, tmp_path):
    """The API server admits a StatefulSet whose mount names a volumeClaimTemplates entry (it validates no
    StatefulSet's pod spec), and so does grpo-lint; the Pod the controller makes from it, with the claim's volume,
    is admitted too, while the same Pod without that volume is refused at the mount, where grpo-lint reports the
    StatefulSet that lacks the entry."""
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "store", "namespace": NS},
           "spec": {"serviceName": "store", "selector": {"matchLabels": {"app": "store"}},
                    "template": {"metadata": {"labels": {"app": "store"}}, "spec": {"containers": [
                        {"name": "store", "image": "registry.k8s.io/pause:3.10",
                         "volumeMounts": [{"name": "data", "mountPath": "/data"}]}]}},
                    "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}}
    assert dry_run(admission_ns, sts) is None
    assert not {k for c, k in lint_errors(sts, tmp_path, "sts") if c == "GRPO002"}
    pod_spec = sts["spec"]["template"]["spec"]
    made = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "store-0", "namespace": NS},
            "spec": {**pod_spec, "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data-store-0"}}]}}
    assert dry_run(admission_ns, made) is None
    bare = {**made, "spec": pod_spec}
    assert "spec.containers.0.volumeMounts.0.name" in (dry_run(admission_ns, bare) or [])
    without = {**sts, "spec": {k: v for k, v in sts["spec"].items() if k != "volumeClaimTemplates"}}
    assert ("GRPO002", "spec.template.spec.containers.0.volumeMounts.0.name") in lint_errors(without, tmp_path, "bare")



def test_a_ray_group_may_leave_out_what_the_crd_defaults(admission_ns, raycluster_crd, tmp_path):
    """KubeRay's CRD lists minReplicas and maxReplicas as required and gives each a default: the API server fills
    the defaults in before it validates, so a worker group without them is admitted, and grpo-lint (with the same
    CRD) passes it; a group without its template, which has no default, is refused by both."""
    group = {"groupName": "gpu", "replicas": 1, "rayStartParams": {}, "template": {"spec": {"containers": [
        {"name": "ray-worker", "image": "rayproject/ray:2.53.0-py311", "resources": {"requests": {"cpu": "1"}}}]}}}
    cluster = {"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": "defaults", "namespace": NS},
               "spec": {"headGroupSpec": {"rayStartParams": {}, "template": {"spec": {"containers": [
                   {"name": "ray-head", "image": "rayproject/ray:2.53.0-py311"}]}}},
                        "workerGroupSpecs": [group]}}
    assert dry_run(admission_ns, cluster) is None
    assert not lint_errors(cluster, tmp_path, "defaults", str(raycluster_crd))
    templateless = copy.deepcopy(cluster)
    del templateless["spec"]["workerGroupSpecs"][0]["template"]
    assert dry_run(admission_ns, templateless) is not None
    assert {c for c, _ in lint_errors(templateless, tmp_path, "templateless", str(raycluster_crd))} == {"GRPO002"}


def test_secret_data_must_decode_as_base64(admission_ns, tmp_path):
    """A Secret whose `data` holds a placeholder that is not base64 (`YOUR_API_KEY`) is refused by the API server
    while it decodes the object, and grpo-lint errs at that key; the same text under `stringData`, and the value
    base64-encoded, are admitted and pass."""
    def secret(**fields):
        return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "tracker", "namespace": NS}, **fields}
    placeholder = secret(data={"api-key": "YOUR_API_KEY"})
    assert dry_run(admission_ns, placeholder) is not None
    assert ("GRPO002", "data.api-key") in lint_errors(placeholder, tmp_path, "placeholder")
    for tag, ok in (("plain", secret(stringData={"api-key": "YOUR_API_KEY"})),
                    ("encoded", secret(data={"api-key": "WU9VUl9BUElfS0VZ"}))):
        assert dry_run(admission_ns, ok) is None, tag
        assert not lint_errors(ok, tmp_path, tag), tag


@pytest.mark.parametrize("kind", ["Role", "ClusterRoleBinding"])
def test_rbac_names_are_path_segments(admission_ns, tmp_path, kind):
    """RBAC objects take any path segment as a name (colons and upper case: `system:controller:…`), which the API
    server admits and grpo-lint passes; a slash in one is refused by both at metadata.name. The rendered releases
    hold no RBAC object, so the oracle's sample never reaches this class."""
    cluster = kind.startswith("Cluster")
    obj = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind,
           "metadata": {"name": "oracle:Events-Reader", **({} if cluster else {"namespace": NS})},
           **({"roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
               "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": NS}]} if cluster
              else {"rules": [{"apiGroups": [""], "resources": ["events"], "verbs": ["get"]}]})}
    assert dry_run(admission_ns, obj) is None
    assert not {k for c, k in lint_errors(obj, tmp_path, "rbac") if c == "GRPO002"}
    slashed = {**obj, "metadata": {**obj["metadata"], "name": "oracle/events"}}
    assert "metadata.name" in (dry_run(admission_ns, slashed) or [])
    assert ("GRPO002", "metadata.name") in lint_errors(slashed, tmp_path, "rbac-slash")
