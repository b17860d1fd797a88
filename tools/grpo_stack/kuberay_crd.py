"""The KubeRay RayCluster CRD schema that grpo-lint validates RayCluster objects against.

Found, first match wins: `--kuberay-crd FILE`, `$GRPO_KUBERAY_CRD`, the user cache written by
`grpo-lint crd fetch` (downloaded once, like kubeconform's schema cache), then the v1.7.0 schema shipped inside
the package (crds/, with its provenance in crds/SOURCES.json), so a plain `pip install ./tools` checks
RayClusters offline. Only an install that lost its package data falls back to a shape check, and grpo-lint says so.

The cache holds the pinned release's CRD reduced to {"source", "kind", "group", "versions": {name: schema}}
(the openAPIV3Schema of each served version), which is also the format `--kuberay-crd` reads.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from .errors import InputError

KUBERAY_VERSION = "v1.7.0"  # the operator version the chart targets (README: prerequisites)
CRD_URL = (f"https://raw.githubusercontent.com/ray-project/kuberay/{KUBERAY_VERSION}/"
           "helm-chart/kuberay-operator/crds/ray.io_rayclusters.yaml")
MAX_CRD_BYTES = 16 * 1024 * 1024  # the v1.7.0 RayCluster CRD is ~1 MB of YAML
TIMEOUT_S = 60
SHIPPED_DIR = Path(__file__).resolve().parent / "crds"


def cache_path() -> Path:
    """$XDG_CACHE_HOME/grpo-stack/kuberay/<version>/ray.io_rayclusters.json (~/.cache when unset)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "grpo-stack" / "kuberay" / KUBERAY_VERSION / "ray.io_rayclusters.json"


def shipped_path(kind: str = "rayclusters") -> Path:
    """The schema of `ray.io_<kind>` at the targeted version, shipped as package data."""
    return SHIPPED_DIR / f"ray.io_{kind}.{KUBERAY_VERSION}.json"


def resolve(explicit: str | None) -> str | None:
    """The CRD file to use: the flag/env value when given, else the cached download, else the shipped schema."""
    if explicit:
        return explicit
    for found in (cache_path(), shipped_path()):
        if found.is_file():
            return str(found)
    return None


def fetch(url: str = CRD_URL, force: bool = False) -> tuple[Path, bool]:
    """Download the CRD into the cache unless it is already there; (path, downloaded)."""
    import urllib.error  # only here: every grpo-lint run imports this module, few download
    import urllib.request

    dest = cache_path()
    if dest.is_file() and not force and _cached_source(dest) in (url, None):
        return dest, False
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as resp:  # noqa: S310 - https or a test's loopback
            raw = resp.read(MAX_CRD_BYTES + 1)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise InputError(url, f"cannot download the KubeRay CRD: {getattr(exc, 'reason', None) or exc}") from None
    if len(raw) > MAX_CRD_BYTES:
        raise InputError(url, f"larger than {MAX_CRD_BYTES // (1024 * 1024)} MiB; not a CRD")
    reduced = reduce_crd(raw, url)
    # A CRD file names no release: only a schema whose digest is the targeted release's becomes the default.
    dest = release_cache_path(known_version(reduced) or CUSTOM)
    dest.parent.mkdir(parents=True, exist_ok=True)
    # Written whole or not at all: a cut download never becomes the cached schema.
    with tempfile.NamedTemporaryFile("w", dir=dest.parent, delete=False, suffix=".part") as tmp:
        json.dump(reduced, tmp)
    os.replace(tmp.name, dest)
    return dest, True


def reduce_crd(raw: bytes, source: str) -> dict[str, Any]:
    """A CustomResourceDefinition (YAML or JSON) or an already reduced schema file -> the reduced form."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(source, f"not a YAML/JSON CRD: {exc}") from None
    doc = _json_or_yaml(text, source)
    if not isinstance(doc, dict):
        raise InputError(source, "not a CustomResourceDefinition")
    if isinstance(doc.get("versions"), dict):  # already reduced (the format of the cache itself)
        kind, group, versions = doc.get("kind"), doc.get("group"), doc["versions"]
    elif doc.get("kind") == "CustomResourceDefinition":
        spec = doc.get("spec") or {}
        kind, group = (spec.get("names") or {}).get("kind"), spec.get("group")
        versions = {v.get("name"): ((v.get("schema") or {}).get("openAPIV3Schema"))
                    for v in spec.get("versions") or [] if isinstance(v, dict)}
    else:
        raise InputError(source, "not a CustomResourceDefinition")
    if kind != "RayCluster" or group != "ray.io" or not isinstance(versions.get("v1"), dict):
        raise InputError(source, f"expected the ray.io RayCluster CRD with a v1 schema, got {kind} in {group}")
    return {"source": source, "kind": kind, "group": group, "versions": {"v1": versions["v1"]}}


def _json_or_yaml(text: str, source: str) -> Any:
    """The shipped and cached schemas are JSON, which json reads in a tenth of PyYAML's time (its constructor is
    Python even over libyaml: 0.3 s for the 1 MB shipped file, a third of a cold lint); a release's CRD is YAML."""
    try:
        return json.loads(text)
    except RecursionError as exc:
        raise InputError(source, f"not a YAML/JSON CRD: {exc}") from None
    except ValueError:
        pass
    import yaml  # only for a CRD in YAML: every grpo-lint run imports this module

    try:
        return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except (yaml.YAMLError, RecursionError) as exc:
        raise InputError(source, f"not a YAML/JSON CRD: {str(exc).splitlines()[0]}") from None


# The RayCluster v1 schema of each KubeRay release grpo-lint recognizes, by the sha256 of that schema as canonical
# JSON (sorted keys, no spaces, UTF-8): a CRD file carries no version, so a download is known by its content,
# whether it is the release's CRD YAML or an already reduced file. v1.7.0:
# helm-chart/kuberay-operator/crds/ray.io_rayclusters.yaml at that tag; v1.5.0: the Go module's
# ray-operator/config/crd/bases/ray.io_rayclusters.yaml (the operator the tests' control plane runs).
KNOWN_SCHEMAS = {
    "b71a02806a7c9eccf6cc4b71c299c6720c520858ac116ba3446c75f1502c9dc7": "v1.7.0",
    "54c205bfae76f793aa208c3942b8913fc36715d1ad3996996401519b2b133831": "v1.5.0",
}
CUSTOM = "custom"  # the cache folder of a CRD no pinned digest recognizes: used only when named (--kuberay-crd)


def schema_digest(reduced: dict[str, Any]) -> str:
    import hashlib

    canonical = json.dumps(reduced["versions"]["v1"], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def known_version(reduced: dict[str, Any]) -> str | None:
    """The KubeRay release whose RayCluster schema this is, by pinned digest; None for any other schema."""
    return KNOWN_SCHEMAS.get(schema_digest(reduced))


def release_cache_path(version: str) -> Path:
    """Where `crd fetch` keeps a download: the targeted release's cache path (the default grpo-lint reads), or a
    folder named after another recognized release or `custom`, which grpo-lint reads only when named."""
    if version == KUBERAY_VERSION:
        return cache_path()
    return cache_path().parent.parent / version / cache_path().name


def _cached_source(path: Path) -> str | None:
    try:
        source = json.loads(path.read_text()).get("source")
    except (OSError, ValueError, AttributeError):
        return None
    return source if isinstance(source, str) else None
