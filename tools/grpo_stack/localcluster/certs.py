"""Certificates made at start with openssl: a CA, the API server's serving pair, an admin client, SA keys."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

VALID_DAYS = 30  # a local cluster kept up for weeks of trying releases; `grpo-cluster up` makes new ones each start


@dataclass(frozen=True)
class Certs:
    ca: Path
    ca_key: Path
    server_cert: Path
    server_key: Path
    admin_cert: Path
    admin_key: Path
    sa_key: Path  # signs service-account tokens (controller manager, API server)
    sa_pub: Path


def _openssl(*args: str, cwd: Path) -> None:
    proc = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(args)} failed: {proc.stderr.strip()}")


def make_certs(directory: Path, service_ip: str) -> Certs:
    """Everything the components need to talk TLS to each other; EC P-256 keys (fast)."""
    d = directory
    d.mkdir(parents=True, exist_ok=True)
    for key in ("ca.key", "server.key", "admin.key", "sa.key"):
        _openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", key, cwd=d)
    _openssl("req", "-x509", "-new", "-key", "ca.key", "-subj", "/CN=grpo-stack-local-ca", "-days", str(VALID_DAYS),
             "-out", "ca.crt", cwd=d)
    (d / "server.ext").write_text(
        "subjectAltName=IP:127.0.0.1,IP:" + service_ip + ",DNS:localhost,DNS:kubernetes,"
        "DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local\n"
        "extendedKeyUsage=serverAuth\nkeyUsage=digitalSignature,keyEncipherment\n")
    (d / "admin.ext").write_text("extendedKeyUsage=clientAuth\nkeyUsage=digitalSignature,keyEncipherment\n")
    for name, subject in (("server", "/CN=kube-apiserver"), ("admin", "/O=system:masters/CN=grpo-stack-admin")):
        _openssl("req", "-new", "-key", f"{name}.key", "-subj", subject, "-out", f"{name}.csr", cwd=d)
        _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                 "-days", str(VALID_DAYS), "-extfile", f"{name}.ext", "-out", f"{name}.crt", cwd=d)
    _openssl("ec", "-in", "sa.key", "-pubout", "-out", "sa.pub", cwd=d)
    return Certs(d / "ca.crt", d / "ca.key", d / "server.crt", d / "server.key", d / "admin.crt", d / "admin.key",
                 d / "sa.key", d / "sa.pub")
