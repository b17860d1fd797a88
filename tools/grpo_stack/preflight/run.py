"""One preflight run: the values' context, every check against one cluster, findings located in the values."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import MAX_MESSAGE, clip
from ..lint.engine import values_context
from ..lint.finding import Finding
from ..values import locate, release_file
from . import checks
from .client import Cluster


@dataclass
class PreflightResult:
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what was found, said once each (stderr)


def preflight(paths: list[str], release: str, namespace: str, cluster: Cluster) -> PreflightResult:
    """Check the cluster against one values file (merged over `paths[:-1]`, like helm -f)."""
    ctx, files = values_context(paths, release=release, namespace=namespace)
    out = PreflightResult()
    missing_namespace = list(checks.namespace(cluster, ctx, out.notes))
    hits = list(missing_namespace)
    for check in checks.CHECKS[1:]:
        if missing_namespace and check in (checks.secrets, checks.storage):
            continue  # nothing can be in a namespace that does not exist; GRPO962 says so once
        hits += check(cluster, ctx, out.notes)
    for h in hits:
        name = checks.CODES[h.code][0]
        file, line, col = locate(files, h.key_path) if h.key_path else (release_file(files).path, 1, 1)
        out.findings.append(Finding(file, line, col, h.code, name, h.severity, h.key_path,
                                    clip(h.message, MAX_MESSAGE), clip(h.remediation, MAX_MESSAGE)))
    out.findings.sort()
    return out


def preflight_many(items: list[list[str]], release: str, namespace: str, kubeconfig: str | None,
                   context: str | None) -> PreflightResult:
    """Every values file against one connection; the cluster-wide notes are said once."""
    cluster = Cluster(kubeconfig, context)
    total = PreflightResult()
    try:
        cluster.get("/version")  # unreachable or unauthorised: exit 2 before any values are read
        for paths in items:
            one = preflight(paths, release, namespace, cluster)
            total.findings += one.findings
            total.notes += [n for n in one.notes if n not in total.notes]
        checks.device_plugins(cluster, total.notes)
    finally:
        cluster.close()
    total.notes.append(checks.NETWORK_POLICY_NOTE)
    return total
