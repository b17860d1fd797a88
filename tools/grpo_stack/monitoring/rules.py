"""The alert rules of the chart's PrometheusRule, with their thresholds read from global.monitoring.alerts.

The expressions carry Helm placeholders (the release's namespace and names, the thresholds); the chart renders
them with `tpl`, so what promtool checks in the tests is what Helm renders for a values file.
"""

from __future__ import annotations

from dataclasses import dataclass

from .metrics import REWARD_5XX, REWARD_TIMEOUT, SANDBOX_FAULTS

NAMESPACE = '{{ .Release.Namespace }}'
RELEASE = '{{ .Release.Name }}'
RAY_CLUSTER = '{{ include "grpo-common.rayClusterName" . }}'
ALERTS = '.Values.global.monitoring.alerts'
# The PodMonitor's job label: the Prometheus Operator names a PodMonitor's targets `<namespace>/<name>`.
REWARD_JOB = f'job="{NAMESPACE}/{RELEASE}-reward-service"'
# How far back the expected step time looks (the longest step in it).
STEP_WINDOW = "6h"


def threshold(name: str) -> str:
    return "{{ " + f"{ALERTS}.{name}" + " }}"


@dataclass(frozen=True)
class Alert:
    name: str
    expr: str
    duration: str  # the rule's `for`
    severity: str
    summary: str
    description: str

    def rule(self) -> dict:
        return {"alert": self.name, "expr": self.expr, "for": self.duration,
                "labels": {"severity": self.severity},
                "annotations": {"summary": self.summary, "description": self.description}}


def _ratio(metric: str, label: str, values: tuple[str, ...], job: str) -> str:
    bad = f'sum by (namespace) (rate({metric}{{{job}, {label}=~"{"|".join(values)}"}}[5m]))'
    return f"{bad}\n  / sum by (namespace) (rate({metric}{{{job}}}[5m]))"


STEP_NS = f'namespace="{NAMESPACE}"'
ALERT_LIST = (
    Alert("GrpoRewardErrors",
          f"{_ratio('reward_scores_total', 'status', REWARD_5XX + REWARD_TIMEOUT, REWARD_JOB)}\n"
          f"  > {threshold('rewardErrorRatio')}",
          "5m", "warning",
          "The reward service answers too many samples with a 5xx or a timeout.",
          "Share of reward answers with status error, overloaded, sandbox_unavailable (HTTP 5xx), timeout or "
          "hard_timeout over 5 minutes is above global.monitoring.alerts.rewardErrorRatio. Those samples score 0 "
          "or fail the step; see the GRPO / Reward dashboard's status mix."),
    Alert("GrpoNoStep",
          f"(time() - max by (namespace) (grpo_step_last_timestamp_seconds{{{STEP_NS}}}))\n"
          f"  > {threshold('stallFactor')} * clamp_min(max by (namespace) "
          f"(max_over_time(grpo_step_seconds{{{STEP_NS}}}[{STEP_WINDOW}])), {threshold('stepTimeFloorSeconds')})",
          "1m", "critical",
          "No training step finished for several times the expected step time.",
          "The last step finished longer ago than global.monitoring.alerts.stallFactor times the longest step of "
          f"the last {STEP_WINDOW} (at least stepTimeFloorSeconds). A hung collective or rollout looks like this; "
          "check the GPU dashboard and the driver's log."),
    Alert("GrpoStalled",
          f"max by (namespace) (grpo_stall{{{STEP_NS}}}) == 1",
          "1m", "critical",
          "The stall detector reports the run as stalled.",
          "The stall detector found no new step within its bound, or the GPUs idle while training lives; its "
          "Kubernetes Event names the reason."),
    Alert("GrpoGpusIdle",
          f'avg by (namespace) (DCGM_FI_DEV_GPU_UTIL{{namespace="{NAMESPACE}", pod=~"{RAY_CLUSTER}-.*"}})\n'
          f"  < {threshold('gpuIdlePercent')}\n"
          f"  and on (namespace) count by (namespace) (grpo_step_number{{{STEP_NS}}}) > 0",
          "{{ " + f"{ALERTS}.gpuIdleMinutes" + " }}m", "warning",
          "The Ray pods' GPUs are idle while the training run lives.",
          "Mean DCGM_FI_DEV_GPU_UTIL of this release's Ray pods is below global.monitoring.alerts.gpuIdlePercent "
          "while the step exporter still reports the run: a silent hang (all ranks waiting) or a starved rollout."),
    Alert("GrpoSandboxSaturated",
          f"{_ratio('reward_sandbox_calls_total', 'outcome', SANDBOX_FAULTS, REWARD_JOB)}\n"
          f"  > {threshold('sandboxSaturationRatio')}",
          "5m", "warning",
          "The code sandbox is saturated: /run_code calls time out or are refused.",
          "Share of the reward service's /run_code calls that time out, are rejected, get a 5xx or reach no "
          "sandbox over 5 minutes is above global.monitoring.alerts.sandboxSaturationRatio. Add sandbox replicas "
          "or lower reward-service.sandbox.concurrency."),
)


def groups() -> list[dict]:
    return [{"name": "grpo-stack", "rules": [a.rule() for a in ALERT_LIST]}]
