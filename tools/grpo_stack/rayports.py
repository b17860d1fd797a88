"""The ports Ray opens in a KubeRay pod unless told otherwise: KubeRay's defaults (ray-operator/controllers/ray/
utils/constant.go: DefaultGcsServerPort, DefaultDashboardPort, DefaultClientPort, DefaultServingPort,
DefaultMetricsPort, DefaultDashboardAgentListenPort; read in v1.5.0, the operator the control plane serves, and
v1.6.0)."""

from __future__ import annotations

# What KubeRay's head Service fronts on the head pod, by port name.
HEAD_DEFAULT_PORTS = {"gcs-server": 6379, "dashboard": 8265, "client": 10001, "serve": 8000}
# Every port a Ray container may listen on: the head's, and the metrics exporter and dashboard agent every node runs.
POD_PORTS = {**HEAD_DEFAULT_PORTS, "metrics": 8080, "dashboard-agent": 52365}
