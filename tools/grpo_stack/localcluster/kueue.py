"""Kueue in the local cluster: its CRDs, its configuration, its webhooks served on loopback.

The controller is the `kueue` toolset's binary (binaries.py: sigs.k8s.io/kueue/cmd/kueue), started as a local
process like the KubeRay operator, with the RayJob and RayCluster integrations enabled and nothing else. Its CRDs
are the ones its kustomization installs, with the conversion webhook its patches enable (Kueue serves v1beta1 and
v1beta2 and converts at /convert). Its webhooks are on: the module's own webhook configurations
(config/components/webhook/manifests.yaml, copied by the build), kept to the webhooks of Kueue's own objects and
of the two Ray integrations. Every webhook is pointed at the local process by `url` (https://127.0.0.1:PORT/<its
path>) instead of the in-cluster Service, with the local CA as its caBundle; the serving certificate is the API
server's (certs.py: its SAN holds 127.0.0.1). Kueue's internal certificate management, leader election, metrics and
visibility server are off: they need an in-cluster Service, a Secret or an APIService this cluster does not have.
"""

from __future__ import annotations

import base64
import shutil
from pathlib import Path
from typing import Any

import yaml

# The integrations this project's chart produces (global.run.queue): a RayJob (job mode), a RayCluster (cluster mode).
FRAMEWORKS = ("ray.io/rayjob", "ray.io/raycluster")
# Webhook paths kept: Kueue's own API objects and the enabled integrations' kinds.
WEBHOOK_PATH_PARTS = ("-kueue-x-k8s-io-", "-ray-io-v1-rayjob", "-ray-io-v1-raycluster")
NAMESPACE = "kueue-system"  # Kueue's own namespace (its events); created with the CRDs


def crds(tools: Path, port: int, ca: Path) -> list[dict[str, Any]]:
    """The CRDs Kueue's kustomization installs (config/components/crd), with the conversion webhook its patches
    enable (v1beta1 <-> v1beta2, served by Kueue at /convert) pointed at the local process."""
    root = tools / "kueue-crds"
    kustomization = yaml.safe_load((root / "kustomization.yaml").read_text())
    out = {}
    for name in kustomization.get("resources") or []:
        crd = yaml.safe_load((root / name).read_text())
        out[crd["metadata"]["name"]] = crd
    bundle = base64.b64encode(ca.read_bytes()).decode()
    for entry in kustomization.get("patches") or []:
        patch = yaml.safe_load((root / entry["path"]).read_text())
        conversion = patch["spec"]["conversion"]
        path = conversion["webhook"]["clientConfig"]["service"]["path"]
        conversion["webhook"]["clientConfig"] = {"url": f"https://127.0.0.1:{port}{path}", "caBundle": bundle}
        out[patch["metadata"]["name"]]["spec"]["conversion"] = conversion
    return list(out.values())


def configuration(health_port: int, webhook_port: int, cert_dir: Path) -> dict[str, Any]:
    return {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration",
        "namespace": NAMESPACE,
        "health": {"healthProbeBindAddress": f"127.0.0.1:{health_port}"},
        "metrics": {"bindAddress": "0"},
        "webhook": {"host": "127.0.0.1", "port": webhook_port, "certDir": str(cert_dir)},
        "leaderElection": {"leaderElect": False},
        "internalCertManagement": {"enable": False},
        "manageJobsWithoutQueueName": False,
        "integrations": {"frameworks": list(FRAMEWORKS)},
    }


def cert_dir(directory: Path, cert: Path, key: Path) -> Path:
    """controller-runtime's webhook server reads tls.crt and tls.key from its certDir."""
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(cert, directory / "tls.crt")
    shutil.copyfile(key, directory / "tls.key")
    return directory


def webhook_configurations(tools: Path, port: int, ca: Path) -> list[dict[str, Any]]:
    bundle = base64.b64encode(ca.read_bytes()).decode()
    out = []
    for doc in yaml.safe_load_all((tools / "kueue-webhook" / "manifests.yaml").read_text()):
        if not doc:
            continue
        kept = []
        for hook in doc.get("webhooks") or []:
            path = hook["clientConfig"]["service"]["path"]
            if any(part in path for part in WEBHOOK_PATH_PARTS):
                kept.append({**hook, "clientConfig": {"url": f"https://127.0.0.1:{port}{path}", "caBundle": bundle}})
        doc["webhooks"] = kept
        doc["metadata"]["name"] = f"kueue-{doc['metadata']['name']}"
        out.append(doc)
    return out
