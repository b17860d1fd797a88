"""recipes/grpo/run-on-cluster.sh end to end WITHOUT a Kubernetes cluster: `kubectl` is a recording shim on
PATH (tests/recipes/kubectl_shim.py) that answers from fixture state derived from the rendered chart and runs
`exec` commands locally; the job is then submitted to a REAL local Ray head (`ray start --head` on loopback,
advertising 8 logical GPUs), whose driver runs a stand-in `verl.trainer.main_ppo` that records the arguments it
received and exits with status 3 when the experiment is named "fail-3".
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from grpo_stack.job import build
from grpo_stack.paths import REPO_ROOT
from grpo_stack.render import job_spec, render
from grpo_stack.values import load_values_file

RELEASE, NAMESPACE = "grpo", "team-a"
SCRIPT = REPO_ROOT / "recipes" / "grpo" / "run-on-cluster.sh"
VENV_BIN = Path(sys.executable).parent


def cluster_state(values: str, *, ready_workers=None, extra=(), storage=None, job=None,
                  unavailable=()) -> tuple[dict, dict]:
    """Fixture state for the shim, derived from the chart render of a shipped values file; `storage` (a local
    directory) stands in for the shared filesystem, `job` replaces keys under global.job, `unavailable` names
    the components whose Deployments are not Available yet."""
    data = load_values_file(REPO_ROOT / "values" / values).data
    if storage is not None:
        data["global"].setdefault("storage", {})["mountPath"] = str(storage)
    for dotted, value in (job or {}).items():
        node = data["global"]["job"]
        *parents, leaf = dotted.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    rendered = render(data, release=RELEASE, namespace=NAMESPACE)
    rc = rendered.of_kind("RayCluster")[0]
    replicas = [g["replicas"] for g in rc.obj["spec"]["workerGroupSpecs"]]
    labels = {"ray.io/cluster": rc.name}
    pods = [{"name": f"{rc.name}-head-x", "namespace": NAMESPACE, "ready": True,
             "labels": {**labels, "ray.io/node-type": "head"}}]
    for i in range(sum(replicas)):
        ready = True if ready_workers is None else i < ready_workers
        pods.append({"name": f"{rc.name}-gpu-worker-{i}", "namespace": NAMESPACE, "ready": ready,
                     "labels": {**labels, "ray.io/node-type": "worker"}})
    cms = [{"name": o.name, "namespace": NAMESPACE, "labels": o.obj["metadata"]["labels"], "data": o.obj["data"]}
           for o in rendered.of_kind("ConfigMap") if "job.json" in (o.obj.get("data") or {})]
    deployments = [{"name": o.name, "namespace": NAMESPACE, "labels": o.obj["metadata"]["labels"],
                    "available": o.obj["metadata"]["labels"].get("app.kubernetes.io/component") not in unavailable}
                   for o in rendered.of_kind("Deployment")]
    state = {"rayclusters": [{"name": rc.name, "namespace": NAMESPACE, "replicas": replicas,
                              "labels": rc.obj["metadata"]["labels"]}], "pods": pods, "configmaps": cms,
             "deployments": deployments}
    for other in extra:
        state["rayclusters"].append(other["cluster"])
        state["pods"].extend(other["pods"])
    return state, job_spec(rendered)


def run_recipe(tmp_path, state, spec, *args, env=None, namespace=NAMESPACE, mounted=None, command=None):
    """`mounted` (text) is what the pod's job.json mount holds; by default the ConfigMap's own value. `command`:
    what runs the recipe for this release and namespace (default: the script itself)."""
    shim_bin = tmp_path / "bin"
    shim_bin.mkdir(exist_ok=True)
    kubectl = shim_bin / "kubectl"
    kubectl.write_text(f"#!/bin/sh\nexec {sys.executable} {Path(__file__).with_name('kubectl_shim.py')} \"$@\"\n")
    kubectl.chmod(0o755)
    (tmp_path / "state.json").write_text(json.dumps(state))
    cm_text = state["configmaps"][0]["data"]["job.json"] if state.get("configmaps") else json.dumps(spec)
    (tmp_path / "job.json").write_text(cm_text if mounted is None else mounted)
    run_env = {**(env or os.environ), "KUBECTL_SHIM_STATE": str(tmp_path / "state.json"),
               "KUBECTL_SHIM_LOG": str(tmp_path / "calls.log"), "KUBECTL_SHIM_ROOT": str(tmp_path / "pod"),
               "GRPO_JOB_SPEC": str(tmp_path / "job.json"),
               "PATH": f"{shim_bin}:{VENV_BIN}:{(env or os.environ)['PATH']}"}
    argv = command or ["bash", str(SCRIPT), "--release", RELEASE, "--namespace", namespace]
    proc = subprocess.run([*argv, *args],
                          env=run_env, capture_output=True, text=True, timeout=300)
    calls = [json.loads(line) for line in (tmp_path / "calls.log").read_text().splitlines()]
    return proc, calls


def job_ids(address: str) -> set[str]:
    from ray.job_submission import JobSubmissionClient

    return {j.submission_id for j in JobSubmissionClient(address).list_jobs()}


def wait_for_job(address: str, env: dict, job_id: str, timeout: float = 180) -> tuple[str, str]:
    from ray.job_submission import JobSubmissionClient

    client = JobSubmissionClient(address)
    deadline = time.time() + timeout
    while time.time() < deadline:
        status = str(client.get_job_status(job_id).value)
        if status in ("SUCCEEDED", "FAILED", "STOPPED"):
            return status, client.get_job_logs(job_id)
        time.sleep(1)
    raise AssertionError("the Ray job did not finish")


def printed_job_id(stdout: str) -> str:
    lines = [ln for ln in stdout.splitlines() if ln.startswith("submit: Ray job id ")]
    assert lines, stdout
    return lines[-1].split()[4]


def test_submits_the_built_command_to_ray(tmp_path, ray_head):
    """The head pod receives the job from the one builder and Ray runs exactly that command, each key once."""
    address, env = ray_head
    state, spec = cluster_state("qwen3-8b.yaml")
    proc, calls = run_recipe(tmp_path, state, spec, env={**env, "RAY_ADDRESS": address})
    assert proc.returncode == 0, proc.stderr
    status, logs = wait_for_job(address, env, printed_job_id(proc.stdout))
    assert status == "SUCCEEDED", logs
    received = json.loads(logs.split("GRPO-ARGV ", 1)[1].splitlines()[0])
    expected = build(spec).argv()
    assert received == expected[3:]  # after python3 -m verl.trainer.main_ppo
    keys = [a.split("=", 1)[0] for a in received[1:]]
    assert len(keys) == len(set(keys)), "a Hydra key was emitted twice"
    exec_pods = {c[c.index("exec") + 1] for c in calls if "exec" in c}
    assert exec_pods == {"grpo-ray-head-x"}, "the job must be submitted from this release's head pod"


def test_wrong_namespace_finds_no_cluster(tmp_path):
    """A namespace typo must not fall back to `default` or to another head: it stops before any exec."""
    state, spec = cluster_state("qwen3-8b.yaml")
    proc, calls = run_recipe(tmp_path, state, spec, namespace="default")
    assert proc.returncode == 2, proc.stderr  # refused before submission (docs/submit.md); 1 is lint findings
    assert "expected one RayCluster for release grpo in default, found 0" in proc.stderr
    assert not [c for c in calls if "exec" in c]


def test_unreachable_cluster_is_a_refusal_before_submission(tmp_path):
    """No API server answers: exit 2 as docs/submit.md says for every refusal before submission (1 is reserved
    for grpo-lint's findings), naming the namespace; nothing is exec'd."""
    state, spec = cluster_state("qwen3-8b.yaml")
    state["unreachable"] = True
    proc, calls = run_recipe(tmp_path, state, spec)
    assert proc.returncode == 2, proc.stderr
    assert f"cannot list RayClusters in namespace {NAMESPACE}" in proc.stderr
    assert not [c for c in calls if "exec" in c]


def test_picks_this_release_head_among_several_clusters(tmp_path):
    """Another release's Ray cluster in the same namespace is never the target (no `.items[0]`)."""
    other = {"cluster": {"name": "other-ray", "namespace": NAMESPACE, "replicas": [1],
                         "labels": {"app.kubernetes.io/instance": "other"}},
             "pods": [{"name": "other-ray-head-y", "namespace": NAMESPACE, "ready": True,
                       "labels": {"ray.io/cluster": "other-ray", "ray.io/node-type": "head"}}]}
    state, spec = cluster_state("qwen3-8b.yaml", extra=[other])
    state["rayclusters"].reverse()
    state["pods"].reverse()
    proc, calls = run_recipe(tmp_path, state, spec, "--dry-run")
    assert proc.returncode == 0, proc.stderr
    exec_pods = {c[c.index("exec") + 1] for c in calls if "exec" in c}
    assert exec_pods == {"grpo-ray-head-x"}


def test_workers_scaled_to_zero_stop_the_submission(tmp_path):
    """With raycluster.worker.scaleToZero the RayCluster asks for no worker: zero Ready of zero would pass the
    worker count, and the job would wait for GPUs forever. Refused before any exec, naming the key."""
    state, spec = cluster_state("qwen3-8b.yaml")
    state["rayclusters"][0]["replicas"] = [0]
    state["pods"] = [p for p in state["pods"] if p["labels"]["ray.io/node-type"] == "head"]
    proc, calls = run_recipe(tmp_path, state, spec)
    assert proc.returncode == 2, proc.stderr
    assert "GPU workers scaled to zero (raycluster.worker.scaleToZero)" in proc.stderr
    assert not [c for c in calls if "exec" in c]


def test_a_dry_run_needs_no_gpu_worker_when_they_are_scaled_to_zero(tmp_path):
    """Stage first (docs/day-2.md): installed with the workers scaled to zero, the dry run waits for the head
    alone and runs every check the in-pod submit makes there; the real submission is still refused."""
    state, spec = cluster_state("qwen3-8b.yaml")
    state["rayclusters"][0]["replicas"] = [0]
    state["pods"] = [p for p in state["pods"] if p["labels"]["ray.io/node-type"] == "head"]
    proc, calls = run_recipe(tmp_path, state, spec, "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert "(no GPU workers: raycluster.worker.scaleToZero; a dry run needs none)" in proc.stdout
    assert "dry run, nothing submitted" in proc.stdout
    waits = [c for c in calls if "wait" in c and "pod" in c]
    assert waits and all(any("ray.io/node-type=head" in a for a in c) for c in waits), waits


def test_pending_worker_stops_the_submission(tmp_path):
    """A Pending worker passed the predecessor's head-only precondition and the run never started."""
    state, spec = cluster_state("qwen3-30b.yaml", ready_workers=1)
    proc, calls = run_recipe(tmp_path, state, spec, "--wait-timeout", "1s")
    assert proc.returncode == 2, proc.stderr
    assert "are not Ready" in proc.stderr
    assert not [c for c in calls if "exec" in c]


@pytest.mark.parametrize("component", ["reward-service", "sandbox-fusion"])
def test_reward_or_sandbox_not_available_stops_the_submission(tmp_path, component):
    """The job's first reward calls follow the submit within minutes and verl's reward client gives up after six
    attempts: a release whose reward service or sandbox is not Available yet is not submitted (exit 2, naming the
    component; nothing exec'd in the head pod). Recording kubectl shim, not a cluster."""
    state, spec = cluster_state("qwen3-235b.yaml", unavailable=(component,))
    proc, calls = run_recipe(tmp_path, state, spec, "--dry-run", "--wait-timeout", "1s")
    assert proc.returncode == 2, proc.stdout
    assert f"{component} of release {RELEASE} is not Available after 1s" in proc.stderr
    assert not [c for c in calls if "exec" in c]


def test_components_the_release_does_not_deploy_are_not_waited_for(tmp_path):
    """qwen3-8b deploys neither a reward service nor a sandbox: the submit goes on, and it waited on no
    Deployment; qwen3-235b deploys both and waits for each by the release's own labels."""
    state, spec = cluster_state("qwen3-8b.yaml")
    proc, calls = run_recipe(tmp_path, state, spec, "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert not [c for c in calls if "wait" in c and "deployment" in c]
    state, spec = cluster_state("qwen3-235b.yaml")
    (tmp_path / "b").mkdir()
    proc, calls = run_recipe(tmp_path / "b", state, spec, "--dry-run")
    assert proc.returncode == 0, proc.stderr
    waited = [c[c.index("-l") + 1] for c in calls if "wait" in c and "deployment" in c]
    assert waited == [f"app.kubernetes.io/instance={RELEASE},app.kubernetes.io/component={c}"
                      for c in ("reward-service", "sandbox-fusion")]


def test_dry_run_prints_the_command(tmp_path):
    state, spec = cluster_state("miles-qwen3-4b.yaml")
    proc, _ = run_recipe(tmp_path, state, spec, "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert "/root/miles/train.py" in proc.stdout and "--rm-url" in proc.stdout
    assert "source" in proc.stdout and "qwen3-4B.sh" in proc.stdout
    assert "--eval-prompt-data eval /fsx/data/aime-2024/aime-2024.jsonl" in proc.stdout
    assert "step 1 convert-hf-to-torch-dist -> /fsx/models/Qwen3-4B_torch_dist: runs first" in proc.stdout
    assert "nothing submitted" in proc.stdout


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is required")
def test_script_refuses_missing_arguments(tmp_path):
    proc = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True)
    assert proc.returncode == 2 and "usage" in proc.stderr


# --- the in-pod submit: banner, resume state, stale spec, outcome ---------------------------------------------------
# All through run-on-cluster.sh with the kubectl shim (not a cluster) and the real local Ray head above.

def test_follow_streams_the_logs_and_prints_the_banner(tmp_path, ray_head):
    """--follow shows the job's own output and exits 0 only when Ray reports SUCCEEDED; the banner names what runs
    where before anything is submitted."""
    address, env = ray_head
    state, spec = cluster_state("qwen3-8b.yaml", storage=tmp_path / "fsx")
    proc, _ = run_recipe(tmp_path, state, spec, "--follow", env={**env, "RAY_ADDRESS": address})
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "GRPO-ARGV " in out, "the job's logs were not streamed"
    for expected in ("submit: framework:  verl", "submit: model:      qwen3-8b",
                     f"submit: cluster:    {spec['cluster']['nodes']} x {spec['cluster']['gpuInstanceType']}",
                     "submit: batches:    train batch (prompts)", "submit: resume:     starts fresh"):
        assert expected in out, out
    assert out.index("submit: resume:") < out.index("submit: Ray job id")
    assert "ended SUCCEEDED" in out


def test_failed_job_fails_the_script(tmp_path, ray_head):
    """The predecessor printed a submission id and exited 0 whatever the job did: with --follow the exit status is
    the job's (the stand-in trainer exits 3)."""
    address, env = ray_head
    state, spec = cluster_state("qwen3-8b.yaml", storage=tmp_path / "fsx", job={"trainer.experiment": "fail-3"})
    proc, _ = run_recipe(tmp_path, state, spec, "--follow", env={**env, "RAY_ADDRESS": address})
    assert proc.returncode == 3, (proc.stdout, proc.stderr)
    assert "ended FAILED" in proc.stderr
    status, _ = wait_for_job(address, env, printed_job_id(proc.stdout))
    assert status == "FAILED"


def test_resume_from_step_n_is_announced(tmp_path, ray_head):
    """A run that will resume says so, with the step and directory, before it is submitted."""
    address, env = ray_head
    storage = tmp_path / "fsx"
    state, spec = cluster_state("qwen3-8b.yaml", storage=storage, job={"resume": {"mode": "auto"}})
    ckpt = storage / spec["job"]["trainer"]["checkpointDir"]
    (ckpt / "global_step_40").mkdir(parents=True)
    (ckpt / "latest_checkpointed_iteration.txt").write_text("40")
    proc, _ = run_recipe(tmp_path, state, spec, env={**env, "RAY_ADDRESS": address})
    assert proc.returncode == 0, proc.stderr
    assert f"submit: resume:     resumes from step 40 in {ckpt}" in proc.stdout
    status, _ = wait_for_job(address, env, printed_job_id(proc.stdout))
    assert status == "SUCCEEDED"


@pytest.mark.parametrize("tracker", ["garbage", "fifo", "directory", "no-step-dir", "orphan-step-dir"])
def test_unreadable_tracker_refuses_to_submit(tmp_path, ray_head, tracker):
    """A tracker that cannot be read means "cannot tell", never "fresh": the run would silently restart from
    step 0 and overwrite the checkpoints. Nothing reaches Ray; exit 2 (a FIFO must not hang the check)."""
    address, env = ray_head
    storage = tmp_path / "fsx"
    state, spec = cluster_state("qwen3-8b.yaml", storage=storage, job={"resume": {"mode": "auto"}})
    ckpt = storage / spec["job"]["trainer"]["checkpointDir"]
    ckpt.mkdir(parents=True)
    t = ckpt / "latest_checkpointed_iteration.txt"
    if tracker == "garbage":
        t.write_text("step forty\n")
    elif tracker == "fifo":
        os.mkfifo(t)
    elif tracker == "directory":
        t.mkdir()
    elif tracker == "no-step-dir":
        t.write_text("40")
    else:
        (ckpt / "global_step_20").mkdir()
    before = job_ids(address)
    proc, _ = run_recipe(tmp_path, state, spec, env={**env, "RAY_ADDRESS": address})
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "submit: resume:     cannot tell" in proc.stdout
    assert "refused: cannot tell where the run would start" in proc.stderr
    assert job_ids(address) == before


def test_resume_disabled_over_old_checkpoints_is_refused_unless_overwrite(tmp_path, ray_head):
    """resume.mode disable where an earlier run left checkpoints: the run would start at step 0 and overwrite them,
    so the submit refuses (exit 2, nothing reaches Ray) and names the ways out; --overwrite-checkpoints, passed
    through run-on-cluster.sh, lets it start fresh."""
    address, env = ray_head
    storage = tmp_path / "fsx"
    state, spec = cluster_state("qwen3-8b.yaml", storage=storage)
    ckpt = storage / spec["job"]["trainer"]["checkpointDir"]
    (ckpt / "global_step_40").mkdir(parents=True)
    (ckpt / "latest_checkpointed_iteration.txt").write_text("garbage")
    spec_text = json.loads(state["configmaps"][0]["data"]["job.json"])
    spec_text["job"]["resume"] = {"mode": "disable"}
    state["configmaps"][0]["data"]["job.json"] = json.dumps(spec_text)
    env = {**env, "RAY_ADDRESS": address}
    before = job_ids(address)
    proc, _ = run_recipe(tmp_path, state, spec_text, env=env)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "would start fresh over an earlier run's checkpoints" in proc.stdout
    assert "--overwrite-checkpoints" in proc.stderr and "resume.mode: auto" in proc.stderr
    assert job_ids(address) == before
    proc, _ = run_recipe(tmp_path, state, spec_text, "--dry-run", "--overwrite-checkpoints", env=env)
    assert proc.returncode == 0, proc.stderr


def test_stale_job_spec_is_refused(tmp_path, ray_head):
    """After `helm upgrade` the pod's ConfigMap mount lags the release: submitting from it would run the old job.
    run-on-cluster.sh hashes the ConfigMap the release holds (read with kubectl) and the submit refuses a mount
    that differs. Nothing reaches Ray."""
    address, env = ray_head
    state, spec = cluster_state("qwen3-8b.yaml", storage=tmp_path / "fsx")
    old = json.loads(state["configmaps"][0]["data"]["job.json"])
    old["job"]["trainer"]["saveFreq"] = 1
    before = job_ids(address)
    proc, calls = run_recipe(tmp_path, state, spec, env={**env, "RAY_ADDRESS": address}, mounted=json.dumps(old))
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "is not the one the release holds now" in proc.stderr
    assert "submit: framework" not in proc.stdout
    assert job_ids(address) == before
    assert any(c[:2] == ["--namespace", NAMESPACE] and "configmap" in c for c in calls)


def test_same_spec_reformatted_is_not_stale(tmp_path):
    """The hash is of the content: the mounted file and kubectl's copy of the same JSON agree however formatted."""
    state, spec = cluster_state("qwen3-8b.yaml", storage=tmp_path / "fsx")
    same = json.dumps(json.loads(state["configmaps"][0]["data"]["job.json"]), indent=7, sort_keys=True)
    proc, _ = run_recipe(tmp_path, state, spec, "--dry-run", mounted=same)
    assert proc.returncode == 0, proc.stderr


def test_miles_conversion_is_skipped_when_its_manifest_matches(tmp_path):
    """The HF -> torch_dist conversion is idempotent: a converted checkpoint with a matching manifest is reused;
    a different model (its config.json changed) is converted again."""
    storage = tmp_path / "fsx"
    state, spec = cluster_state("miles-qwen3-4b.yaml", storage=storage)
    model = storage / spec["job"]["model"]["path"]
    model.mkdir(parents=True)
    (model / "config.json").write_text('{"architectures": ["Qwen3ForCausalLM"]}')
    (step,) = build(spec).prepare
    out = Path(step.output)
    out.mkdir(parents=True)
    (out / "latest_checkpointed_iteration.txt").write_text("release")
    import hashlib

    manifest = {**step.manifest, "hfConfigSha256": hashlib.sha256((model / "config.json").read_bytes()).hexdigest()}
    (out / "grpo-stack-manifest.json").write_text(json.dumps(manifest))
    proc, _ = run_recipe(tmp_path, state, spec, "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert f"convert-hf-to-torch-dist -> {out}: skipped (matching manifest)" in proc.stdout
    (model / "config.json").write_text('{"architectures": ["Qwen3MoeForCausalLM"]}')
    proc, _ = run_recipe(tmp_path, state, spec, "--dry-run")
    assert "runs first (manifest differs in hfConfigSha256" in proc.stdout


def test_failed_conversion_stops_before_training(tmp_path, ray_head):
    """The conversion runs as a Ray job on GPU nodes and is waited for; when it fails (here: no miles checkout in
    the stand-in cluster) training is not submitted and the script fails."""
    address, env = ray_head
    storage = tmp_path / "fsx"
    state, spec = cluster_state("miles-qwen3-4b.yaml", storage=storage)
    model = storage / spec["job"]["model"]["path"]
    model.mkdir(parents=True)
    (model / "config.json").write_text("{}")
    before = job_ids(address)
    proc, _ = run_recipe(tmp_path, state, spec, env={**env, "RAY_ADDRESS": address})
    assert proc.returncode != 0, proc.stdout
    assert "convert-hf-to-torch-dist ended FAILED; training not submitted" in proc.stderr
    new = job_ids(address) - before
    assert len(new) == 1 and next(iter(new)).startswith("grpo-convert-hf-to-torch-dist-")
    assert not (Path(build(spec).prepare[0].output) / "grpo-stack-manifest.json").exists()


def test_missing_job_configmap_stops_before_exec(tmp_path):
    """Without the release's job ConfigMap there is no spec to compare the mount with: stop, never submit
    unchecked (kubectl shim)."""
    state, spec = cluster_state("qwen3-8b.yaml")
    cm_text = state["configmaps"][0]["data"]["job.json"]
    state["configmaps"] = []
    proc, calls = run_recipe(tmp_path, state, spec, "--dry-run", mounted=cm_text)
    assert proc.returncode == 2, proc.stderr  # a refusal before submission (docs/submit.md)
    assert "expected one job ConfigMap for release grpo in team-a, found 0" in proc.stderr
    assert not [c for c in calls if "exec" in c]
