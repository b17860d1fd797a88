"""The PrometheusRule's alerts, as Helm renders them for values/monitoring/monitoring.yaml, checked and
unit-tested by promtool (Prometheus v0.316.0's `check rules` and `test rules`).

Where the check stops: promtool evaluates the rules over the series written below, which carry the labels the
Prometheus Operator gives PodMonitor targets (job `<namespace>/<monitor>`) and DCGM's pod mapping gives GPU series;
no Prometheus scrapes a real cluster here. The grpo_step_* and grpo_stall series stand for the step exporter,
which is checked against these names when it lands (tests/monitoring/test_queries.py lists them as pending).
"""

from __future__ import annotations

import yaml
from grpo_stack.monitoring.rules import ALERT_LIST

from tests.conftest import NAMESPACE, RELEASE

JOB = f'job="{NAMESPACE}/{RELEASE}-reward-service", namespace="{NAMESPACE}"'
NS = f'namespace="{NAMESPACE}"'
RAY_POD = f'pod="{RELEASE}-ray-gpu-worker-x7k2p", gpu="0"'


def fires(name: str, at: str) -> dict:
    (alert,) = [a for a in ALERT_LIST if a.name == name]
    return {"eval_time": at, "alertname": name, "exp_alerts": [{
        "exp_labels": {"severity": alert.severity, "namespace": NAMESPACE},
        "exp_annotations": {"summary": alert.summary, "description": alert.description}}]}


def quiet(name: str, at: str) -> dict:
    return {"eval_time": at, "alertname": name, "exp_alerts": []}


def case(series: dict[str, str], *checks: dict) -> dict:
    return {"interval": "1m", "input_series": [{"series": s, "values": v} for s, v in series.items()],
            "alert_rule_test": list(checks)}


# Series notation: `a+bxn` is a, a+b, ... (n+1 samples, one a minute); `vxn` repeats v.
CASES = [
    # 10 of 160 answers a minute time out (6 %, above 5 %); no_answer is a verdict, not a fault: not counted.
    case({f'reward_scores_total{{{JOB}, status="ok"}}': "0+100x30",
          f'reward_scores_total{{{JOB}, status="no_answer"}}': "0+50x30",
          f'reward_scores_total{{{JOB}, status="hard_timeout"}}': "0+10x30"},
         quiet("GrpoRewardErrors", "4m"), fires("GrpoRewardErrors", "15m")),
    # 5xx at 3 % stays quiet; so does the reward service of another release in the namespace at 50 %.
    case({f'reward_scores_total{{{JOB}, status="ok"}}': "0+97x30",
          f'reward_scores_total{{{JOB}, status="overloaded"}}': "0+3x30",
          f'reward_scores_total{{job="{NAMESPACE}/other-reward-service", {NS}, status="error"}}': "0+50x30"},
         quiet("GrpoRewardErrors", "20m")),
    # Steps of 60 s until minute 9, then none: expected step time is the 300 s floor, 3 x 300 = 900 s after the
    # last step (600 s) the condition holds (minute 25), held 1 minute.
    case({f"grpo_step_last_timestamp_seconds{{{NS}}}": "60+60x9 600x40",
          f"grpo_step_seconds{{{NS}}}": "60x50"},
         quiet("GrpoNoStep", "20m"), fires("GrpoNoStep", "30m")),
    # A slow but progressing run: a step every 14 minutes, each 840 s long, is never a stall.
    case({f"grpo_step_last_timestamp_seconds{{{NS}}}": "0x13 840x13 1680x13 2520x13",
          f"grpo_step_seconds{{{NS}}}": "840x55"},
         quiet("GrpoNoStep", "20m"), quiet("GrpoNoStep", "40m"), quiet("GrpoNoStep", "55m")),
    # The stall detector's verdict.
    case({f"grpo_stall{{{NS}}}": "0x5 1x10"}, quiet("GrpoStalled", "3m"), fires("GrpoStalled", "10m")),
    # The Ray worker's GPU drops to 2 % at minute 11 while steps are still reported: fires after 15 minutes.
    case({f"DCGM_FI_DEV_GPU_UTIL{{{NS}, {RAY_POD}}}": "95x10 2x40",
          f"grpo_step_number{{{NS}}}": "1+1x50"},
         quiet("GrpoGpusIdle", "20m"), fires("GrpoGpusIdle", "30m")),
    # Idle GPUs with no training reported, and another pod's idle GPU beside busy Ray GPUs: quiet.
    case({f"DCGM_FI_DEV_GPU_UTIL{{{NS}, {RAY_POD}}}": "2x50"}, quiet("GrpoGpusIdle", "40m")),
    case({f"DCGM_FI_DEV_GPU_UTIL{{{NS}, {RAY_POD}}}": "95x50",
          f'DCGM_FI_DEV_GPU_UTIL{{{NS}, pod="{RELEASE}-vllm-5d9c7b-abcde", gpu="1"}}': "0x50",
          f"grpo_step_number{{{NS}}}": "1+1x50"}, quiet("GrpoGpusIdle", "40m")),
    # 20 % of /run_code calls time out (above 10 %).
    case({f'reward_sandbox_calls_total{{{JOB}, outcome="success"}}': "0+80x30",
          f'reward_sandbox_calls_total{{{JOB}, outcome="timeout"}}': "0+20x30"},
         quiet("GrpoSandboxSaturated", "4m"), fires("GrpoSandboxSaturated", "15m")),
    case({f'reward_sandbox_calls_total{{{JOB}, outcome="success"}}': "0+95x30",
          f'reward_sandbox_calls_total{{{JOB}, outcome="failed"}}': "0+40x30",
          f'reward_sandbox_calls_total{{{JOB}, outcome="rejected"}}': "0+5x30"},
         quiet("GrpoSandboxSaturated", "20m")),
]


def rendered_rules(rendered_on) -> dict:
    (rule,) = rendered_on.of_kind("PrometheusRule")
    return rule.obj["spec"]


def test_rules_pass_promtool_check(rendered_on, promtool_dir, tmp_path):
    from grpo_stack.monitoring.promql import promtool

    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(rendered_rules(rendered_on)))
    proc = promtool("check", "rules", "rules.yaml", directory=promtool_dir, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_every_alert_fires_when_it_should_and_only_then(rendered_on, promtool_dir, tmp_path):
    from grpo_stack.monitoring.promql import promtool

    tested = {c["alertname"] for case_ in CASES for c in case_["alert_rule_test"]}
    assert tested == {a.name for a in ALERT_LIST}, "every alert has a promtool case"
    fired = {c["alertname"] for case_ in CASES for c in case_["alert_rule_test"] if c["exp_alerts"]}
    assert fired == tested, "every alert has a case where it fires"
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(rendered_rules(rendered_on)))
    (tmp_path / "test.yaml").write_text(yaml.safe_dump({"rule_files": ["rules.yaml"], "evaluation_interval": "1m",
                                                        "tests": CASES}, sort_keys=False))
    proc = promtool("test", "rules", "test.yaml", directory=promtool_dir, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
