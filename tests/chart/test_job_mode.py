"""Job mode (global.run.mode: job): a KubeRay RayJob instead of the long-lived RayCluster.

What a user relies on: the RayJob runs the very cluster cluster mode would (one template helper, compared here
render against render), it ends with the training run's status (the in-pod submit with --follow is its entrypoint,
the spec it was rendered with named by hash) and frees the GPUs (shutdownAfterJobFinishes), the NetworkPolicies
select its pods although KubeRay names its cluster at random, and Kueue gets it suspended. The check stops at the
chart here; the real API server and operator take the RayJob in tests/cluster/test_job_mode_live.py, and the
in-pod submit that the entrypoint starts is the one tests/recipes runs against a real Ray head.
"""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
import time

import pytest
from grpo_stack import deadline
from grpo_stack.job import toolsmap
from grpo_stack.render import RenderError, merged_values
from grpo_stack.values import schema_violations

EXPOSED = {"raycluster.dashboard.exposed": True}
JOB = {**EXPOSED, "global.run.mode": "job"}


def only(rendered, kind: str) -> dict:
    (obj,) = rendered.of_kind(kind)
    return obj.obj


@pytest.mark.parametrize("name", ["qwen3-8b", "miles-qwen3-30b-a3b"])
def test_rayjob_runs_the_cluster_cluster_mode_runs(render_values, name):
    cluster = render_values(name, EXPOSED)
    job = render_values(name, JOB)
    assert not job.of_kind("RayCluster"), "job mode renders no long-lived RayCluster"
    assert not cluster.of_kind("RayJob")
    # The one difference: upgradeStrategy, which KubeRay v1.6.0+ refuses on a cluster a RayJob creates
    # (ValidateRayClusterUpgradeOptions: "upgradeStrategy cannot be set when RayCluster is created by RayJob").
    cluster_spec = dict(only(cluster, "RayCluster")["spec"])
    assert cluster_spec.pop("upgradeStrategy") == {"type": "Recreate"}
    assert only(job, "RayJob")["spec"]["rayClusterSpec"] == cluster_spec


def test_rayjob_ends_with_the_run_and_frees_the_gpus(render_values):
    rendered = render_values("qwen3-8b", {**JOB, "global.run.ttlSecondsAfterFinished": 120})
    spec = only(rendered, "RayJob")["spec"]
    assert spec["submissionMode"] == "SidecarMode"
    assert spec["shutdownAfterJobFinishes"] is True
    assert spec["ttlSecondsAfterFinished"] == 120
    assert "suspend" not in spec, "an unqueued RayJob starts at once"
    argv = spec["entrypoint"].split()
    assert argv[:5] == ["python3", "/etc/grpo-stack-tools/grpo_stack.zip", "--follow", "--address",
                        "http://127.0.0.1:8265"]
    # The hash names the job.json text this release holds, as the head pod's mount will show it.
    text = only(rendered, "ConfigMap")["data"]["job.json"]
    assert argv[argv.index("--expect-spec-text-sha256") + 1] == hashlib.sha256(text.rstrip("\n").encode()).hexdigest()


def test_job_mode_refuses_a_dashboard_the_operator_cannot_reach(render_values, shipped_values, set_values):
    with pytest.raises(RenderError, match="dashboard/exposed': value must be true"):
        render_values("qwen3-8b", {"global.run.mode": "job"})
    violations = schema_violations(merged_values(set_values(shipped_values["qwen3-8b"], {"global.run.mode": "job"})))
    assert [v.key_path for v in violations] == ["raycluster.dashboard.exposed"]
    assert "reads the RayJob's status from the dashboard" in violations[0].message


def test_network_policies_select_the_rayjob_pods(render_values):
    """KubeRay names a RayJob's cluster `<rayjob>-<random>`: a selector on ray.io/cluster would leave its pods
    outside every allow rule (and the default deny would cut NCCL between them)."""
    rendered = render_values("qwen3-8b", JOB)
    cluster = only(rendered, "RayJob")["spec"]["rayClusterSpec"]
    pods = [cluster["headGroupSpec"], *cluster["workerGroupSpecs"]]
    ray_policies = [p.obj for p in rendered.of_kind("NetworkPolicy")
                    if "grpo-stack.io/ray-cluster" in p.obj["spec"]["podSelector"].get("matchLabels", {})]
    assert ray_policies
    for policy in ray_policies:
        selector = policy["spec"]["podSelector"]["matchLabels"]
        for group in pods:
            assert selector.items() <= group["template"]["metadata"]["labels"].items()
    operator_peers = [peer for p in ray_policies for rule in p["spec"].get("ingress", [])
                      for peer in rule.get("from", []) if "namespaceSelector" in peer]
    assert {"kubernetes.io/metadata.name": "kuberay-system"} in [
        peer["namespaceSelector"].get("matchLabels") for peer in operator_peers]


def test_queued_rayjob_is_created_suspended_in_its_local_queue(render_values):
    rendered = render_values("qwen3-8b", {**JOB, "global.run.queue": "team-a"})
    job = only(rendered, "RayJob")
    assert job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "team-a"
    assert job["spec"]["suspend"] is True
    assert job["spec"]["shutdownAfterJobFinishes"] is True  # Kueue refuses a RayJob without it
    cluster = only(render_values("qwen3-8b", {"global.run.queue": "team-a"}), "RayCluster")
    assert cluster["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "team-a"


def test_tools_configmap_runs_the_in_pod_submit_with_the_standard_library_alone(render_values, tmp_path):
    """The zip the RayJob's entrypoint runs: unpacked by its own __main__.py, under `python -S` (no site-packages:
    the Ray image has none of this project's dependencies), it accepts the spec the chart rendered, hash and all,
    and refuses an edited one."""
    rendered = render_values("qwen3-8b", JOB)
    spec = only(rendered, "RayJob")["spec"]
    cm = toolsmap.configmap("grpo", "team-a")
    assert cm["metadata"]["name"] == "grpo-tools"
    assert {"name": "grpo-tools", "configMap": {"name": "grpo-tools", "optional": True}} in (
        spec["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]["volumes"])
    archive = tmp_path / "grpo_stack.zip"
    archive.write_bytes(base64.b64decode(cm["binaryData"][toolsmap.KEY]))
    job_json = tmp_path / "job.json"
    job_json.write_text(only(rendered, "ConfigMap")["data"]["job.json"])
    args = spec["entrypoint"].split()[2:]
    args = [a for a in args if a != "--follow"]  # --dry-run instead: nothing to follow, no Ray head here
    ok = subprocess.run([sys.executable, "-S", str(archive), *args, "--dry-run", "--spec", str(job_json)],
                        capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert "dry run, nothing submitted" in ok.stdout
    job_json.write_text(job_json.read_text().replace('"saveFreq": 50', '"saveFreq": 10'))
    stale = subprocess.run([sys.executable, "-S", str(archive), *args, "--dry-run", "--spec", str(job_json)],
                           capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert stale.returncode == 2 and "not the one this RayJob was rendered with" in stale.stderr


def rfc3339(unix: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(unix))


def test_deadline_fails_the_rayjob_at_the_deadline_the_submit_saves_before(render_values):
    """KubeRay counts activeDeadlineSeconds from the RayJob's status.startTime, which it sets after the render; the
    submit counts from the render (--started-at). So the planned save, one grace period before the submit's end,
    comes before KubeRay's stop: the check here is that both ends are the same instant counted from the render. Where
    it stops: KubeRay's own timer runs in the control-plane tier only as far as the RayJob's admission."""
    legacy = {**JOB, "global.job.verl.useV1Trainer": False, "global.job.trainer.saveFreq": 5}
    before = int(time.time())
    rendered = render_values("qwen3-8b", {**legacy, "global.job.deadline": {"hours": 2}})
    after = int(time.time())
    job = only(rendered, "RayJob")
    clock = int(job["metadata"]["annotations"]["grpo-stack.io/deadline-clock"])
    assert before <= clock <= after
    assert job["spec"]["activeDeadlineSeconds"] == 7200
    argv = job["spec"]["entrypoint"].split()
    assert int(argv[argv.index("--started-at") + 1]) == clock
    spec_job = json.loads(only(rendered, "ConfigMap")["data"]["job.json"])["job"]
    submit_end = deadline.from_job(spec_job, None).end_time(clock)
    assert submit_end == clock + job["spec"]["activeDeadlineSeconds"]

    # A Capacity Block ending before the budget runs out: the earlier end applies on both sides.
    end = before + 3600 + 0.5
    rendered = render_values("qwen3-8b", {**legacy, "global.job.deadline": {"hours": 2, "end": rfc3339(end)}})
    job = only(rendered, "RayJob")
    clock = int(job["metadata"]["annotations"]["grpo-stack.io/deadline-clock"])
    assert job["spec"]["activeDeadlineSeconds"] == int(end) - clock
    spec_job = json.loads(only(rendered, "ConfigMap")["data"]["job.json"])["job"]
    assert deadline.from_job(spec_job, None).end_time(clock) == clock + job["spec"]["activeDeadlineSeconds"]


def test_no_deadline_no_active_deadline(render_values):
    spec = only(render_values("qwen3-8b", JOB), "RayJob")
    assert "activeDeadlineSeconds" not in spec["spec"] and "--started-at" not in spec["spec"]["entrypoint"]
    assert "grpo-stack.io/deadline-clock" not in (spec["metadata"].get("annotations") or {})


def test_a_deadline_already_past_fails_the_install(render_values):
    past = rfc3339(time.time() - 600)
    with pytest.raises(RenderError, match=r"global.job.deadline: the deadline passed \d+ s before this render"):
        render_values("qwen3-8b", {**JOB, "global.job.deadline": {"end": past}})
