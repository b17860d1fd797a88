"""Values of the monitoring section (`global.monitoring`): scrape targets, alert thresholds, a DCGM exporter."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints

from .common import Dns1123, Strict
from .pods import LabelKey, LabelValue

# A Prometheus duration as the Prometheus Operator's CRDs accept it (`30s`, `1m`, `1h30m`).
Duration = Annotated[str, StringConstraints(pattern=r"^(0|(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$",
                                            min_length=2, max_length=16)]
# A container port name (IANA_SVC_NAME: what a PodMonitor's / ServiceMonitor's `port` names).
PortName = Annotated[str, StringConstraints(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length=15)]


class DcgmExporter(Strict):
    """The cluster's NVIDIA DCGM exporter (the GPU Operator's `nvidia-dcgm-exporter` or the dcgm-exporter chart),
    scraped through its Service. Its series must carry the GPU's pod and namespace (the exporter's Kubernetes
    pod mapping, on in the GPU Operator) for the GPU dashboard and the idle-GPU alert to find this release."""

    namespace: Dns1123 = Field(description="Namespace of the exporter's Service, e.g. `gpu-operator`.")
    selector: dict[LabelKey, LabelValue] = Field(
        min_length=1, max_length=8, json_schema_extra={"additionalProperties": False},
        description="Labels of the exporter's Service, e.g. `{app: nvidia-dcgm-exporter}` (GPU Operator).")
    port: PortName = Field(description="Name of the Service port that serves /metrics: `gpu-metrics` (GPU "
                           "Operator) or `metrics` (the dcgm-exporter chart).")


class Alerts(Strict):
    """Thresholds of the PrometheusRule's alerts (docs/observability.md)."""

    rewardErrorRatio: float = Field(
        gt=0, le=1, description="GrpoRewardErrors: share of reward answers that are 5xx (error, overloaded, "
        "sandbox_unavailable) or timeouts (timeout, hard_timeout) over 5 minutes, held 5 minutes.")
    stallFactor: float = Field(
        ge=1, le=100, description="GrpoNoStep: fires when no step finished for this many times the expected step "
        "time (the longest step of the last 6 hours, at least stepTimeFloorSeconds).")
    stepTimeFloorSeconds: int = Field(
        ge=1, le=86_400, description="GrpoNoStep: the least expected step time, so that a run of quick steps "
        "is not called stalled by one slow step.")
    gpuIdlePercent: float = Field(
        gt=0, le=100, description="GrpoGpusIdle: mean utilisation (DCGM_FI_DEV_GPU_UTIL) of the Ray pods' GPUs "
        "below this while the step exporter reports the run. Needs dcgmExporter.")
    gpuIdleMinutes: int = Field(ge=1, le=1440, description="GrpoGpusIdle: how long the GPUs stay idle first.")
    sandboxSaturationRatio: float = Field(
        gt=0, le=1, description="GrpoSandboxSaturated: share of the reward service's /run_code calls that time "
        "out, are rejected, get a 5xx or find no sandbox, over 5 minutes, held 5 minutes.")


class Monitoring(Strict):
    """Prometheus Operator objects the chart renders: PodMonitors for the Ray pods, the reward service and the vLLM
    server, a ServiceMonitor for a DCGM exporter, a PrometheusRule and Grafana dashboards (ConfigMaps labelled
    `grafana_dashboard: "1"`). Needs the Prometheus Operator's CRDs in the cluster."""

    labels: dict[LabelKey, LabelValue] = Field(
        max_length=16, json_schema_extra={"additionalProperties": False},
        description="Labels on every monitoring object, for the Prometheus's podMonitorSelector, "
        "serviceMonitorSelector and ruleSelector (kube-prometheus-stack: `{release: <its release name>}`).")
    interval: Duration = Field(description="Scrape interval of every monitor, e.g. `30s`.")
    prometheusNamespace: Dns1123 = Field(
        description="Namespace of the Prometheus that scrapes: the only one admitted to the vLLM server's port "
        "(which serves the API besides /metrics).")
    dcgmExporter: DcgmExporter | None = Field(
        default=None, description="The cluster's DCGM exporter, scraped by a ServiceMonitor; absent: the cluster "
        "has none, and no GPU panel or idle-GPU alert has data.")
    alerts: Alerts
