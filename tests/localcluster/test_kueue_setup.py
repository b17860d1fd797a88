"""Kueue's manifests rewritten for the local cluster (grpo_stack/localcluster/kueue.py), on files laid out as Kueue
v0.17.0's module has them (config/components/crd: kustomization, bases, conversion patches; config/components/webhook:
manifests.yaml): every webhook the local process serves points at 127.0.0.1 with the local CA, and none it does not
serve (another integration's) is registered, since each one fails closed. The real files, and the API server and
Kueue that use them, are tests/cluster/test_kueue.py."""

from __future__ import annotations

import base64

import yaml
from grpo_stack.localcluster import kueue


def _write(path, doc) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump_all(doc) if isinstance(doc, list) else yaml.safe_dump(doc))


def _hook(name: str, path: str) -> dict:
    return {"name": name, "failurePolicy": "Fail", "sideEffects": "None", "admissionReviewVersions": ["v1"],
            "clientConfig": {"service": {"name": "webhook-service", "namespace": "system", "path": path}}}


def test_webhooks_and_conversion_point_at_the_local_process(tmp_path):
    crds, hooks = tmp_path / "kueue-crds", tmp_path / "kueue-webhook"
    _write(crds / "kustomization.yaml", {"resources": ["bases/kueue.x-k8s.io_workloads.yaml",
                                                       "bases/kueue.x-k8s.io_resourceflavors.yaml"],
                                         "patches": [{"path": "patches/webhook_in_workloads.yaml"}]})
    for name in ("workloads", "resourceflavors"):
        _write(crds / "bases" / f"kueue.x-k8s.io_{name}.yaml",
               {"kind": "CustomResourceDefinition", "metadata": {"name": f"{name}.kueue.x-k8s.io"}, "spec": {}})
    _write(crds / "patches" / "webhook_in_workloads.yaml", {
        "metadata": {"name": "workloads.kueue.x-k8s.io"}, "spec": {"conversion": {"strategy": "Webhook", "webhook": {
            "clientConfig": {"service": {"namespace": "system", "name": "webhook-service", "path": "/convert"}},
            "conversionReviewVersions": ["v1"]}}}})
    _write(hooks / "manifests.yaml", [
        {"kind": "MutatingWebhookConfiguration", "metadata": {"name": "mutating-webhook-configuration"},
         "webhooks": [_hook("mpod.kb.io", "/mutate--v1-pod"), _hook("mrayjob.kb.io", "/mutate-ray-io-v1-rayjob"),
                      _hook("mworkload.kb.io", "/mutate-kueue-x-k8s-io-v1beta2-workload")]},
        {"kind": "ValidatingWebhookConfiguration", "metadata": {"name": "validating-webhook-configuration"},
         "webhooks": [_hook("vraycluster.kb.io", "/validate-ray-io-v1-raycluster"),
                      _hook("vjob.kb.io", "/validate-batch-v1-job")]}])
    ca = tmp_path / "ca.crt"
    ca.write_text("-----BEGIN CERTIFICATE-----\n")
    bundle = base64.b64encode(ca.read_bytes()).decode()

    out = {c["metadata"]["name"]: c for c in kueue.crds(tmp_path, 9443, ca)}
    assert set(out) == {"workloads.kueue.x-k8s.io", "resourceflavors.kueue.x-k8s.io"}
    assert out["workloads.kueue.x-k8s.io"]["spec"]["conversion"]["webhook"]["clientConfig"] == {
        "url": "https://127.0.0.1:9443/convert", "caBundle": bundle}
    assert "conversion" not in out["resourceflavors.kueue.x-k8s.io"]["spec"]

    configs = {c["kind"]: c for c in kueue.webhook_configurations(tmp_path, 9443, ca)}
    served = {h["name"]: h["clientConfig"] for c in configs.values() for h in c["webhooks"]}
    assert set(served) == {"mrayjob.kb.io", "mworkload.kb.io", "vraycluster.kb.io"}
    assert served["mrayjob.kb.io"] == {"url": "https://127.0.0.1:9443/mutate-ray-io-v1-rayjob", "caBundle": bundle}
    assert configs["MutatingWebhookConfiguration"]["metadata"]["name"] == "kueue-mutating-webhook-configuration"


def test_configuration_enables_the_ray_integrations_only(tmp_path):
    config = kueue.configuration(8081, 9443, tmp_path)
    assert config["integrations"] == {"frameworks": ["ray.io/rayjob", "ray.io/raycluster"]}
    assert config["manageJobsWithoutQueueName"] is False
    assert config["webhook"] == {"host": "127.0.0.1", "port": 9443, "certDir": str(tmp_path)}
    assert config["internalCertManagement"] == {"enable": False}
