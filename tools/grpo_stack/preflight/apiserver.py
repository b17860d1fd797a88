"""global.job.supervision.events against the cluster: the head's egress (apiServerCidrs on apiServerPort) must
hold every endpoint of the API server, as the cluster lists them in the `kubernetes` Endpoints of `default` (what a
NetworkPolicy sees after the Service's address is translated). A miss is a warning: the run goes on, its Events do
not reach the API server (the submit's log says so once)."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from ..lint.context import LintContext
from ..lint.finding import Severity
from .client import Cluster
from .hit import ClusterHit

KEY = "global.job.supervision.events"
ENDPOINTS = "/api/v1/namespaces/default/endpoints/kubernetes"


def endpoints(answer: dict | None) -> list[tuple[str, int]]:
    """(address, port) of every endpoint the `kubernetes` Endpoints object lists."""
    out = []
    for subset in (answer or {}).get("subsets") or []:
        ports = [int(p["port"]) for p in subset.get("ports") or [] if p.get("port")]
        for address in subset.get("addresses") or []:
            out += [(str(address.get("ip")), port) for port in ports]
    return out


def events_api_server(cluster: Cluster, ctx: LintContext, notes: list[str]) -> Iterator[ClusterHit]:
    events = ctx.get(KEY) or {}
    if not isinstance(events, dict) or not events.get("enabled") or not ctx.component_enabled("raycluster"):
        return
    cidrs = [ipaddress.ip_network(str(c), strict=False) for c in events.get("apiServerCidrs") or []]
    port = int(events.get("apiServerPort") or 443)
    listed = endpoints(cluster.get(ENDPOINTS))
    if not listed:
        notes.append("the API server's endpoints are not listed (default/kubernetes Endpoints): "
                     f"{KEY}.apiServerCidrs not checked")
        return
    notes.append("API server endpoints: " + ", ".join(f"{a}:{p}" for a, p in listed))
    outside = [a for a, _ in listed if not any(ipaddress.ip_address(a) in net for net in cidrs)]
    if outside:
        yield ClusterHit("GRPO968", f"{KEY}.apiServerCidrs", f"the API server answers at {', '.join(outside)}, "
                         f"outside apiServerCidrs {[str(c) for c in cidrs]}: the head's NetworkPolicy drops its "
                         "Events", severity=Severity.WARNING,
                         remediation="add those addresses (as /32) or the control plane's subnets")
    ports = sorted({p for _, p in listed})
    if port not in ports:
        yield ClusterHit("GRPO968", f"{KEY}.apiServerPort", f"the API server's endpoints listen on {ports}, not "
                         f"apiServerPort {port}: the head's NetworkPolicy drops its Events", severity=Severity.WARNING,
                         remediation=f"set apiServerPort to {ports[0]}")
