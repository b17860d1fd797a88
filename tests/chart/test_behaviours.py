"""What a user of the chart notices, asserted on rendered objects (release `grpo`, namespace `team-a`).

Values files that enable each component: qwen3-235b (sandbox-fusion, vllm, lm-eval), qwen3-30b and
miles-qwen3-4b (reward-service); every shipped file enables fsx-utils.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import shlex
import socket
import stat
import subprocess
import threading
from pathlib import Path

import pytest
import yaml

RELEASE = "grpo"
NAMESPACE = "team-a"
# A node group for the sandbox alone: what sandbox-fusion.privileged: true requires.
DEDICATED = {"nodeSelector": {"grpo-stack/sandbox": "true"},
             "tolerations": [{"key": "grpo-stack/sandbox", "operator": "Exists", "effect": "NoSchedule"}]}
PRIVILEGED = {"sandbox-fusion.privileged": True, "sandbox-fusion.dedicatedNodes": DEDICATED}
SANDBOX = "qwen3-235b"  # enables sandbox-fusion, vllm and lm-eval
REWARD = "qwen3-30b"  # enables reward-service
# The evaluation release of the 235B run (values/eval/eval.yaml on top): vllm and lm-eval, no RayCluster.
EVAL_PHASE = {"global.components.raycluster": False, "global.components.sandboxFusion": False,
              "global.components.fsxUtils": False, "global.components.vllm": True, "global.components.lmEval": True}
CLUSTER_SCOPED = {"Namespace", "ClusterRole", "ClusterRoleBinding", "PersistentVolume", "StorageClass",
                  "PriorityClass", "CustomResourceDefinition", "MutatingWebhookConfiguration",
                  "ValidatingWebhookConfiguration"}
STANDARD_LABELS = ("app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/version",
                   "app.kubernetes.io/managed-by", "app.kubernetes.io/part-of", "app.kubernetes.io/component",
                   "helm.sh/chart")
SECRET_NAME = re.compile(r"TOKEN|SECRET|PASSWORD|KEY", re.IGNORECASE)
URL = re.compile(r"https?://[^\s\"'\\,)]+")


# --- helpers -------------------------------------------------------------------------------------------------

def pod_templates(obj: dict) -> list[tuple[dict, dict]]:
    """(template metadata, pod spec) of every pod an object creates."""
    kind, spec = obj.get("kind"), obj.get("spec") or {}
    if kind == "Pod":
        return [(obj.get("metadata") or {}, spec)]
    if kind in ("Deployment", "StatefulSet", "DaemonSet", "Job", "ReplicaSet"):
        t = spec.get("template") or {}
        return [(t.get("metadata") or {}, t.get("spec") or {})]
    if kind == "RayCluster":
        groups = [spec.get("headGroupSpec") or {}, *(spec.get("workerGroupSpecs") or [])]
        return [((g.get("template") or {}).get("metadata") or {}, (g.get("template") or {}).get("spec") or {})
                for g in groups]
    return []


def containers(obj: dict) -> list[dict]:
    return [c for _, spec in pod_templates(obj)
            for c in (spec.get("initContainers") or []) + (spec.get("containers") or [])]


def env_of(container: dict) -> dict[str, dict]:
    return {e["name"]: e for e in container.get("env") or []}


def strings(node):
    if isinstance(node, dict):
        for v in node.values():
            yield from strings(v)
    elif isinstance(node, list):
        for v in node:
            yield from strings(v)
    elif isinstance(node, str):
        yield node


def component(rendered, kind: str, name: str) -> dict:
    found = [o.obj for o in rendered.of_kind(kind)
             if ((o.obj.get("metadata") or {}).get("labels") or {}).get("app.kubernetes.io/name") == name]
    assert len(found) == 1, f"expected one {kind} of component {name}, found {len(found)}"
    return found[0]


def raycluster(rendered) -> dict:
    found = rendered.of_kind("RayCluster")
    assert len(found) == 1
    return found[0].obj


def head_pod_labels(cluster: dict) -> dict[str, str]:
    """Labels on the Ray head pod: the template's plus those KubeRay adds (ray-operator utils/constant.go)."""
    name = cluster["metadata"]["name"]
    template = cluster["spec"]["headGroupSpec"]["template"]
    return {**((template.get("metadata") or {}).get("labels") or {}), "ray.io/cluster": name,
            "ray.io/node-type": "head", "ray.io/group": "headgroup", "ray.io/is-ray-node": "yes",
            "ray.io/identifier": f"{name}-head"}


def worker_pod_labels(cluster: dict) -> dict[str, str]:
    name = cluster["metadata"]["name"]
    group = cluster["spec"]["workerGroupSpecs"][0]
    return {**((group["template"].get("metadata") or {}).get("labels") or {}), "ray.io/cluster": name,
            "ray.io/node-type": "worker", "ray.io/group": group["groupName"], "ray.io/is-ray-node": "yes",
            "ray.io/identifier": f"{name}-worker"}


def selects(selector: dict, labels: dict[str, str]) -> bool:
    """Kubernetes LabelSelector semantics (matchLabels AND matchExpressions)."""
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    for e in selector.get("matchExpressions") or []:
        key, op, values = e["key"], e["operator"], e.get("values") or []
        ok = {"In": key in labels and labels[key] in values, "NotIn": labels.get(key) not in values,
              "Exists": key in labels, "DoesNotExist": key not in labels}[op]
        if not ok:
            return False
    return True


def run_script(script: str, env: dict[str, str], path_dir: Path, timeout: float = 60):
    full_env = {**os.environ, **env, "PATH": f"{path_dir}:{os.environ['PATH']}"}
    return subprocess.run(["bash", "-c", script], check=False, env=full_env, capture_output=True, text=True,
                          timeout=timeout)


def stub(path_dir: Path, name: str, body: str) -> None:
    p = path_dir / name
    p.write_text("#!/usr/bin/env bash\n" + body + "\n")
    p.chmod(p.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


# --- namespace -----------------------------------------------------------------------------------------------

def test_every_namespaced_object_is_in_the_release_namespace(values_name, rendered_all):
    """No object lands outside the release namespace (review 000: the sandbox ignored KUBE_NAMESPACE)."""
    wrong = [f"{o.kind}/{o.name}: {(o.obj.get('metadata') or {}).get('namespace')!r}"
             for o in rendered_all[values_name].objects
             if o.kind not in CLUSTER_SCOPED and (o.obj.get("metadata") or {}).get("namespace") != NAMESPACE]
    assert not wrong, f"objects not in namespace {NAMESPACE}: {wrong}"


def test_no_literal_default_namespace(values_name, rendered_all):
    """Nothing points at `default` when installed elsewhere (review 000: sandbox-fusion.default.svc URL)."""
    r = rendered_all[values_name]
    text = "\n".join([*r.manifests.values(), r.notes])
    hits = re.findall(r".{0,40}(?:\.default\.svc|\.default\b|namespace:\s*\"?default\"?|-n\s+default\b).{0,20}",
                      text)
    assert not hits, hits


def test_in_cluster_urls_name_the_release_namespace(values_name, rendered_all):
    """Every in-cluster URL (job endpoints, env values, helm test pods) resolves in the release namespace
    (review 000: reward calls went to sandbox-fusion.default.svc whatever KUBE_NAMESPACE said)."""
    from grpo_stack.render import job_spec

    r = rendered_all[values_name]
    texts = [*(s for o in r.objects for s in strings(o.obj)), *strings(job_spec(r))]
    urls = {u for t in texts for u in URL.findall(t)}
    internal = {u for u in urls if ".svc" in u or u.split("/")[2].split(":")[0].startswith(f"{RELEASE}-")}
    bad = sorted(u for u in internal if f".{NAMESPACE}.svc.cluster.local" not in u)
    assert not bad, bad


def test_job_endpoints_and_command_use_the_release_namespace(rendered_all):
    """The trainer's sandbox URL (job.json and the built command) is in the release namespace (review 000)."""
    from grpo_stack.job import build
    from grpo_stack.render import job_spec

    spec = job_spec(rendered_all[SANDBOX])
    assert spec["endpoints"], "qwen3-235b enables the sandbox: job.json must carry its endpoint"
    assert all(f".{NAMESPACE}.svc.cluster.local" in url for url in spec["endpoints"].values()), spec["endpoints"]
    # Code is scored by the reward service through the sandbox; verl's default scorer (sandbox outage = 0.0) and
    # its sandbox URL are not used.
    argv = build(spec).argv()
    assert not [a for a in argv if "run_code" in a or "sandbox_fusion" in a], argv
    assert any("custom_reward_function.path" in a for a in argv)


# --- raycluster ----------------------------------------------------------------------------------------------

def test_raycluster_api_version(rendered_all):
    assert raycluster(rendered_all["qwen3-8b"])["apiVersion"] == "ray.io/v1"


def test_ray_head_schedules_no_work(values_name, rendered_all):
    """No CUDA-importing actor or driver lands on the GPU-less head (review 001: head pinned without libcuda)."""
    params = raycluster(rendered_all[values_name])["spec"]["headGroupSpec"]["rayStartParams"]
    assert (params.get("num-gpus"), params.get("num-cpus")) == ("0", "0"), params


def test_no_nvidia_visible_devices_void(values_name, rendered_all):
    """NVIDIA_VISIBLE_DEVICES=void hides the driver from a pod that may still import CUDA (review 001)."""
    hits = [c["name"] for o in rendered_all[values_name].objects for c in containers(o.obj)
            if env_of(c).get("NVIDIA_VISIBLE_DEVICES", {}).get("value") == "void"]
    assert not hits
    assert "void" not in "".join(rendered_all[values_name].manifests.values())


def test_ray_head_is_on_a_cpu_instance(values_name, rendered_all, shipped_values):
    """The head must not take a scarce GPU node (review 001: head pinned to the scarcest node type)."""
    from grpo_stack.catalog.instances import lookup

    spec = raycluster(rendered_all[values_name])["spec"]["headGroupSpec"]["template"]["spec"]
    head_type = spec["nodeSelector"]["node.kubernetes.io/instance-type"]
    gpu_type = shipped_values[values_name]["global"]["cluster"]["gpuInstanceType"]
    assert head_type != gpu_type
    known = lookup(head_type)
    assert known is None or known.gpus == 0, f"{head_type} has {known.gpus} GPUs"
    assert not re.match(r"^(p\d|g\d|trn|inf|dl)", head_type), head_type


@pytest.mark.parametrize("nodes", [1, 2, 6])
def test_worker_replicas_follow_global_nodes(nodes, render_values):
    """The node count is written once (review 000: a 48-GPU literal applied unchanged on one node)."""
    group = raycluster(render_values("qwen3-8b", {"global.cluster.nodes": nodes}))["spec"]["workerGroupSpecs"]
    assert len(group) == 1
    assert (group[0]["replicas"], group[0]["minReplicas"], group[0]["maxReplicas"]) == (nodes, nodes, nodes)


def test_scale_to_zero_asks_for_no_worker_and_keeps_the_shape(render_values):
    """raycluster.worker.scaleToZero: no worker pod asked for (the operator's side: tests/cluster/test_grpo_run.py);
    the job still states the run's shape, and the worker template is unchanged (no head recreation)."""
    plain = raycluster(render_values("qwen3-8b", {"global.cluster.nodes": 2}))
    zero = raycluster(render_values("qwen3-8b", {"global.cluster.nodes": 2, "raycluster.worker.scaleToZero": True}))
    group = zero["spec"]["workerGroupSpecs"][0]
    assert (group["replicas"], group["minReplicas"], group["maxReplicas"]) == (0, 0, 2)
    assert group["template"] == plain["spec"]["workerGroupSpecs"][0]["template"]
    assert zero["spec"]["headGroupSpec"] == plain["spec"]["headGroupSpec"]


def test_worker_requests_every_gpu_and_efa(values_name, rendered_all, shipped_values):
    """A partial GPU/EFA request makes NCCL fall back silently (review 001: EFA_PER_NODE correctness)."""
    cluster = shipped_values[values_name]["global"]["cluster"]
    worker = raycluster(rendered_all[values_name])["spec"]["workerGroupSpecs"][0]["template"]["spec"]
    res = worker["containers"][0]["resources"]
    assert int(res["requests"]["nvidia.com/gpu"]) == int(res["limits"]["nvidia.com/gpu"]) == cluster["gpusPerNode"]
    assert int(res["requests"]["vpc.amazonaws.com/efa"]) == cluster["efaPerNode"]
    assert int(res["limits"]["vpc.amazonaws.com/efa"]) == cluster["efaPerNode"]


def test_ray_pods_mount_fsx_and_shm(values_name, rendered_all, shipped_values):
    """Ray pods see the FSx claim at mountPath and a RAM-backed /dev/shm (NCCL needs more than 64 MiB)."""
    storage = shipped_values[values_name]["global"].get("storage") or {}
    claim, mount = storage.get("claimName", "fsx-lustre"), storage.get("mountPath", "/fsx")
    for _, spec in pod_templates(raycluster(rendered_all[values_name])):
        vols = {v["name"]: v for v in spec["volumes"]}
        mounts = {m["mountPath"]: m["name"] for m in spec["containers"][0]["volumeMounts"]}
        assert vols[mounts[mount]].get("persistentVolumeClaim", {}).get("claimName") == claim
        assert vols[mounts["/dev/shm"]].get("emptyDir", {}).get("medium") == "Memory"


def test_nccl_socket_ifname_excludes_interfaces(values_name, rendered_all):
    """NCCL_SOCKET_IFNAME must exclude, not name, interfaces: naming eth0 breaks on EFA nodes (review 000)."""
    for c in containers(raycluster(rendered_all[values_name])):
        assert env_of(c).get("NCCL_SOCKET_IFNAME", {}).get("value") == "^docker,lo,veth", c["name"]


def test_ray_pods_disable_service_links(values_name, rendered_all):
    for _, spec in pod_templates(raycluster(rendered_all[values_name])):
        assert spec.get("enableServiceLinks") is False


def test_raycluster_upgrade_strategy_recreate(rendered_all):
    assert raycluster(rendered_all["qwen3-8b"])["spec"]["upgradeStrategy"]["type"] == "Recreate"


def test_head_pod_mounts_the_job_configmap(values_name, rendered_all, shipped_values):
    """The job in the head pod is the job in values (review 000: config keys that nothing read)."""
    r = rendered_all[values_name]
    head = raycluster(r)["spec"]["headGroupSpec"]["template"]["spec"]
    cm = [o.obj for o in r.of_kind("ConfigMap") if "job.json" in (o.obj.get("data") or {})]
    assert len(cm) == 1
    vols = [v["name"] for v in head["volumes"] if (v.get("configMap") or {}).get("name") == cm[0]["metadata"]["name"]]
    assert vols and any(m["name"] in vols for m in head["containers"][0]["volumeMounts"])
    assert json.loads(cm[0]["data"]["job.json"])["job"] == shipped_values[values_name]["global"]["job"]


# --- sandbox-fusion ------------------------------------------------------------------------------------------

def test_sandbox_deployment_and_service_in_release_namespace(rendered_all):
    """review 000: the sandbox Deployment and Service set no namespace and landed in the kubectl context's."""
    r = rendered_all[SANDBOX]
    for kind in ("Deployment", "Service"):
        assert component(r, kind, "sandbox-fusion")["metadata"]["namespace"] == NAMESPACE


def _sandbox_pod(rendered) -> tuple[dict, dict, dict]:
    d = component(rendered, "Deployment", "sandbox-fusion")
    meta, spec = pod_templates(d)[0]
    return meta, spec, spec["containers"][0]


def test_sandbox_listens_on_all_interfaces(rendered_all):
    """SandboxFusion binds localhost by default and the Service could never reach it."""
    assert env_of(_sandbox_pod(rendered_all[SANDBOX])[2])["HOST"]["value"] == "0.0.0.0"


def test_sandbox_probes_tcp_liveness_http_readiness(rendered_all):
    """An HTTP liveness probe kills overloaded pods and zeroes code rewards (review 000, Batch 6)."""
    c = _sandbox_pod(rendered_all[SANDBOX])[2]
    assert "tcpSocket" in c["livenessProbe"] and "httpGet" not in c["livenessProbe"]
    assert "httpGet" in c["readinessProbe"]


def test_sandbox_otel_opt_out(rendered_all):
    """An OTel injector made print(42) take 10 s and zeroed every code reward (review 000)."""
    annotations = _sandbox_pod(rendered_all[SANDBOX])[0].get("annotations") or {}
    assert annotations.get("instrumentation.opentelemetry.io/inject-python") == "false"
    assert sum(k.startswith("instrumentation.opentelemetry.io/inject-") and v == "false"
               for k, v in annotations.items()) >= 5


def test_sandbox_anti_affinity_matches_the_ray_head(rendered_all):
    """The anti-affinity must select the head pod KubeRay creates (review 000: `ray-node-type` matched no pod,
    so the sandbox and the Ray head shared a node and crashed together)."""
    r = rendered_all[SANDBOX]
    cluster = raycluster(r)
    terms = _sandbox_pod(r)[1]["affinity"]["podAntiAffinity"]
    required = terms.get("requiredDuringSchedulingIgnoredDuringExecution") or []
    assert required, "the sandbox runs model-written code: anti-affinity from the Ray head must be required"
    selector = required[0]["labelSelector"]
    assert (selector.get("matchLabels") or {}).get("ray.io/node-type") == "head"
    # The chart's label on every Ray pod, the cluster's name in both modes (a RayJob's cluster is named at random).
    assert (selector.get("matchLabels") or {}).get("grpo-stack.io/ray-cluster") == cluster["metadata"]["name"]
    assert required[0]["topologyKey"] == "kubernetes.io/hostname"
    assert selects(selector, head_pod_labels(cluster))
    assert not selects(selector, worker_pod_labels(cluster))
    assert "ray-node-type" not in "".join(r.manifests.values())


def test_sandbox_has_no_service_account_token(rendered_all):
    """Model-written code must hold no API credentials."""
    assert _sandbox_pod(rendered_all[SANDBOX])[1].get("automountServiceAccountToken") is False


def _sandbox_policy(rendered) -> dict:
    return component(rendered, "NetworkPolicy", "sandbox-fusion")


def test_sandbox_network_policy_selects_the_sandbox(rendered_all):
    r = rendered_all[SANDBOX]
    meta = _sandbox_pod(r)[0]
    assert selects(_sandbox_policy(r)["spec"]["podSelector"], meta["labels"])


def test_sandbox_network_policy_admits_only_this_releases_reward_service(rendered_all):
    """Only the release's reward service (code routes) and its helm test pod may send code; not the Ray pods (the
    trainers score code through the reward service), no namespace- or IP-wide peers."""
    r = rendered_all[SANDBOX]
    cluster = raycluster(r)
    test_pod = component(r, "Pod", "sandbox-fusion-test")
    reward_labels = component(r, "Deployment", "reward-service")["spec"]["template"]["metadata"]["labels"]
    peers = [p for rule in _sandbox_policy(r)["spec"].get("ingress") or [] for p in rule.get("from") or []]
    assert peers, "no ingress peers: nothing could reach the sandbox"
    for p in peers:
        assert set(p) == {"podSelector"}, f"peer wider than a pod selector: {p}"
        labels = (p["podSelector"].get("matchLabels") or {})
        ours = labels.get("ray.io/cluster") == cluster["metadata"]["name"] or selects(
            p["podSelector"], test_pod["metadata"]["labels"]) or selects(p["podSelector"], reward_labels)
        assert ours, f"peer admits pods outside this release: {p}"
    assert not any(selects(p["podSelector"], worker_pod_labels(cluster)) for p in peers), "Ray pods reach the sandbox"
    assert any(selects(p["podSelector"], test_pod["metadata"]["labels"]) for p in peers), "helm test is blocked"
    assert any(selects(p["podSelector"], reward_labels) for p in peers), "the reward service cannot score code"
    other = {**worker_pod_labels(cluster), "ray.io/cluster": "other-ray"}
    assert not any(selects(p["podSelector"], other) for p in peers), "another release's Ray pods are admitted"


def test_sandbox_network_policy_denies_all_egress(rendered_all):
    """Model-written code cannot reach the network, the API server or instance metadata."""
    spec = _sandbox_policy(rendered_all[SANDBOX])["spec"]
    assert "Egress" in spec["policyTypes"]
    assert not spec.get("egress")


def test_sandbox_unprivileged_by_default(rendered_all):
    c = _sandbox_pod(rendered_all[SANDBOX])[2]
    assert (c.get("securityContext") or {}).get("privileged") is False


def test_sandbox_privileged_only_on_request_with_checkov_reason(render_values):
    """privileged: true is opt-in, and the object then carries a checkov skip with a reason where checkov reads
    it (the Deployment's own metadata.annotations; checkov ignores pod-template annotations)."""
    d = component(render_values(SANDBOX, PRIVILEGED), "Deployment", "sandbox-fusion")
    assert d["spec"]["template"]["spec"]["containers"][0]["securityContext"]["privileged"] is True
    skips = [v for k, v in ((d["metadata"].get("annotations") or {}).items()) if k.startswith("checkov.io/skip")]
    assert any(s.startswith("CKV_K8S_16=") and len(s.split("=", 1)[1].strip()) > 10 for s in skips), \
        f"Deployment metadata.annotations has no checkov.io/skipN: CKV_K8S_16=<reason>: {skips}"


def _pinned(image: str) -> bool:
    if "@sha256:" in image:
        return True
    name, _, tag = image.rpartition(":")
    return bool(name) and "/" not in tag and tag not in ("", "latest")


def test_sandbox_image_pinned(rendered_all):
    image = _sandbox_pod(rendered_all[SANDBOX])[2]["image"]
    assert _pinned(image), image


# --- reward-service ------------------------------------------------------------------------------------------

def test_reward_service_deployment_probes_and_metrics(rendered_all):
    """Liveness only asks if the loop answers; readiness scores a canary (review 001: healthy while broken)."""
    r = rendered_all[REWARD]
    d = component(r, "Deployment", "reward-service")
    svc = component(r, "Service", "reward-service")
    c = d["spec"]["template"]["spec"]["containers"][0]
    assert c["livenessProbe"]["httpGet"]["path"] == "/health"
    assert c["readinessProbe"]["httpGet"]["path"] == "/ready"
    assert "metrics" in {p.get("name") for p in c["ports"]}
    assert "metrics" in {p.get("name") for p in svc["spec"]["ports"]}


# --- fsx-utils -----------------------------------------------------------------------------------------------

def _fsx(rendered) -> tuple[dict, dict]:
    d = component(rendered, "Deployment", "fsx-utils")
    spec = d["spec"]["template"]["spec"]
    return spec, spec["containers"][0]


def _bash_script(c: dict) -> str:
    cmd = [*(c.get("command") or []), *(c.get("args") or [])]
    assert cmd[:2] == ["bash", "-c"], cmd
    return cmd[2]


# The fsx-utils image carries the tools (nothing installed at start); its readiness and pinning are tested in
# tests/data/test_where_they_run.py.


def test_fsx_utils_token_from_secret_no_sa_token_pinned(values_name, rendered_all):
    spec, c = _fsx(rendered_all[values_name])
    assert "secretKeyRef" in env_of(c)["HF_TOKEN"].get("valueFrom", {})
    assert spec.get("automountServiceAccountToken") is False
    assert _pinned(c["image"]), c["image"]


# --- vllm ----------------------------------------------------------------------------------------------------

def _vllm(rendered) -> tuple[dict, dict]:
    d = component(rendered, "Deployment", "vllm")
    return d, d["spec"]["template"]["spec"]["containers"][0]


@pytest.mark.parametrize("probe", [None, {"vllm.startupProbe.failureThreshold": 400},
                                   {"vllm.startupProbe.initialDelaySeconds": 3000,
                                    "vllm.startupProbe.periodSeconds": 60}], ids=["shipped", "threshold", "delay"])
def test_vllm_progress_deadline_covers_startup_budget(probe, render_values):
    """ProgressDeadlineExceeded while the model loads as designed (review 000: 600 s default vs 60 min)."""
    d, c = _vllm(render_values(SANDBOX, {**EVAL_PHASE, **(probe or {})}))
    p = c["startupProbe"]
    budget = p.get("initialDelaySeconds", 0) + p.get("failureThreshold", 3) * p.get("periodSeconds", 10)
    assert d["spec"]["progressDeadlineSeconds"] >= budget, (d["spec"]["progressDeadlineSeconds"], budget)


@pytest.mark.parametrize("eager", [False, True])
def test_vllm_args_and_env_follow_values(eager, render_values, set_values):
    """Values the server needs must reach it (review 000: VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS and
    VLLM_ENFORCE_EAGER were documented as REQUIRED and silently discarded)."""
    over = {"vllm.enforceEager": eager, "vllm.maxModelLen": 24576, "vllm.gpuMemoryUtilization": 0.9,
            "vllm.executeModelTimeoutSeconds": 2400}
    _, c = _vllm(render_values(SANDBOX, {**EVAL_PHASE, **over}))
    args = c.get("args") or []
    assert "--max-model-len=24576" in args
    assert "--gpu-memory-utilization=0.9" in args
    assert ("--enforce-eager" in args) is eager
    assert env_of(c)["VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS"]["value"] == "2400"


def test_every_container_pulls_if_not_present(values_name, rendered_all):
    """Pinned images: IfNotPresent everywhere (a 20 GB image re-pulled on every restart otherwise)."""
    bad = [f"{o.kind}/{o.name}/{c['name']}: {c.get('imagePullPolicy')}" for o in rendered_all[values_name].objects
           for c in containers(o.obj) if c.get("imagePullPolicy") != "IfNotPresent"]
    assert not bad, bad


def test_every_image_is_pinned(values_name, rendered_all):
    bad = [c["image"] for o in rendered_all[values_name].objects for c in containers(o.obj) if not _pinned(c["image"])]
    assert not bad, bad


# --- lm-eval -------------------------------------------------------------------------------------------------

def _lm_eval(rendered) -> tuple[dict, dict]:
    job = component(rendered, "Job", "lm-eval")
    spec = job["spec"]["template"]["spec"]
    return spec, spec["containers"][0]


def _lm_eval_runnable(c: dict, tmp_path: Path, models_url: str) -> tuple[str, dict[str, str]]:
    (tmp_path / "image-hf-home").mkdir(exist_ok=True)
    script = (_bash_script(c).replace("/eval-out", str(tmp_path / "eval-out"))
              .replace("/opt/hf-home", str(tmp_path / "image-hf-home")))
    env = {k: e["value"] for k, e in env_of(c).items() if "value" in e}
    env["MODELS_URL"] = models_url
    env["HF_HOME"] = str(tmp_path / "hf")
    return script, env


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_lm_eval_fails_when_vllm_never_ready(render_values, tmp_path):
    """The wait loop must fail the Job, not run lm-eval against nothing (review 000: checks that cannot fail)."""
    _, c = _lm_eval(render_values(SANDBOX, EVAL_PHASE))
    script, env = _lm_eval_runnable(c, tmp_path, f"http://127.0.0.1:{_closed_port()}/v1/models")
    env["READY_TIMEOUT_SECONDS"] = "1"  # in the cluster: vLLM's startup budget, from the vllm ConfigMap
    stub(tmp_path, "sleep", "/bin/sleep 0.2")
    stub(tmp_path, "lm_eval", f'echo called > "{tmp_path}/lm_eval_called"')
    result = run_script(script, env, tmp_path, timeout=30)
    assert result.returncode == 1, (result.returncode, result.stderr)
    assert "vLLM never became ready" in result.stderr
    assert not (tmp_path / "lm_eval_called").exists()


class _Models(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        ok = self.path == "/v1/models"
        body = json.dumps({"data": [{"id": "grpo-eval"}]}).encode() if ok else b"{}"
        self.send_response(200 if ok else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_lm_eval_proceeds_once_vllm_answers(render_values, tmp_path):
    """Once /v1/models answers, lm_eval runs with the served model, the tasks and an output under /eval-out."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Models)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        _, c = _lm_eval(render_values(SANDBOX, EVAL_PHASE))
        script, env = _lm_eval_runnable(c, tmp_path, f"http://127.0.0.1:{server.server_port}/v1/models")
        env["READY_TIMEOUT_SECONDS"] = "30"
        stub(tmp_path, "lm_eval", f'printf "%s\\n" "$@" > "{tmp_path}/lm_eval_args"')
        result = run_script(script, env, tmp_path, timeout=60)
    finally:
        server.shutdown()
    assert result.returncode == 0, result.stderr
    args = (tmp_path / "lm_eval_args").read_text().splitlines()
    assert args[args.index("--tasks") + 1] == env["TASKS"]
    assert f"model={env['SERVED_MODEL']}" in args[args.index("--model_args") + 1]
    assert args[args.index("--output_path") + 1].startswith(str(tmp_path / "eval-out"))


def test_lm_eval_fsx_read_only_but_one_subpath(render_values):
    """lm-eval runs model-written code: checkpoints and other runs' results must not be visible, let alone
    writable (review 000: valeval-job held read-write access to the whole FSx volume). The code-running container
    mounts exactly its own results directory; only the init container (no model output) sees the results root."""
    spec, c = _lm_eval(render_values(SANDBOX, EVAL_PHASE))
    pvc = {v["name"] for v in spec["volumes"] if "persistentVolumeClaim" in v}
    mounts = [m for m in c.get("volumeMounts") or [] if m["name"] in pvc]
    assert len(mounts) == 1 and mounts[0]["mountPath"] == "/eval-out", mounts
    assert mounts[0]["subPath"].startswith("eval-results/qwen3-235b-a22b-lora/base/"), mounts
    init = [m for ct in spec.get("initContainers") or [] for m in ct.get("volumeMounts") or [] if m["name"] in pvc]
    assert [m["subPath"] for m in init] == ["eval-results"]


def test_lm_eval_has_no_service_account_token(render_values):
    assert _lm_eval(render_values(SANDBOX, EVAL_PHASE))[0].get("automountServiceAccountToken") is False


class _AnyTagLoader(yaml.SafeLoader):
    pass


_AnyTagLoader.add_multi_constructor("!", lambda loader, suffix, node: loader.construct_scalar(node))


def test_lm_eval_tasks_define_pass_at_k(render_values):
    """humaneval_p4 is its own task, 4 samples, scored at k including 4 (review 000: variants collapsed)."""
    cm = component(render_values(SANDBOX, EVAL_PHASE), "ConfigMap", "lm-eval")
    tasks = {yaml.load(text, Loader=_AnyTagLoader).get("task"): yaml.load(text, Loader=_AnyTagLoader)
             for name, text in cm["data"].items() if name.endswith(".yaml")}
    p4 = tasks["humaneval_p4"]
    assert p4["repeats"] == 4
    ks = [m.get("k") for m in p4["metric_list"] if "k" in m]
    assert ks and 4 in ks[0], ks


# --- secrets, labels -----------------------------------------------------------------------------------------

def test_no_secret_objects_and_no_literal_secrets(values_name, rendered_all):
    """Tokens come from Secrets by reference only (review 000: HF_TOKEN echoed and committed in plaintext)."""
    r = rendered_all[values_name]
    assert not r.of_kind("Secret")
    literal = [f"{o.kind}/{o.name}/{c['name']}: {name}" for o in r.objects for c in containers(o.obj)
               for name, e in env_of(c).items() if SECRET_NAME.search(name) and "valueFrom" not in e]
    assert not literal, literal


def test_standard_labels_on_every_object(values_name, rendered_all):
    missing = [f"{o.kind}/{o.name}: {sorted(set(STANDARD_LABELS) - set(o.obj['metadata'].get('labels') or {}))}"
               for o in rendered_all[values_name].objects
               if set(STANDARD_LABELS) - set(o.obj["metadata"].get("labels") or {})]
    assert not missing, missing


def test_deployment_selectors_are_name_and_instance_only(values_name, rendered_all):
    """A selector with helm.sh/chart or version changes on upgrade and Kubernetes rejects the update."""
    for o in rendered_all[values_name].of_kind("Deployment"):
        assert set(o.obj["spec"]["selector"]["matchLabels"]) == {"app.kubernetes.io/name",
                                                                 "app.kubernetes.io/instance"}, o.name
        assert not o.obj["spec"]["selector"].get("matchExpressions")


# --- NOTES and helm test -------------------------------------------------------------------------------------

def test_notes_name_namespace_and_next_commands(values_name, rendered_all):
    r = rendered_all[values_name]
    notes = r.notes
    assert NAMESPACE in notes
    assert f"kubectl -n {NAMESPACE}" in notes
    assert f"helm test {RELEASE} -n {NAMESPACE}" in notes
    assert f"grpo-stack.io/ray-cluster={raycluster(r)['metadata']['name']}" in notes
    deployments = {o.name for o in r.of_kind("Deployment")}
    assert set(re.findall(r"deploy/([\w.-]+)", notes)) <= deployments


def test_notes_scripts_exist(values_name, rendered_all, repo_root):
    """Every repo script NOTES tells the user to run must exist (review 000: documented commands not re-walked)."""
    scripts = re.findall(r"(recipes/[\w./-]+\.sh)", rendered_all[values_name].notes)
    missing = [s for s in scripts if not (repo_root / s).is_file()]
    assert not missing, f"NOTES.txt sends the user to scripts that do not exist: {missing}"


def test_notes_grpo_render_command_is_accepted(values_name, rendered_all, repo_root):
    """The grpo-render line NOTES prints must parse (review 000: a quickstart command that exits 2)."""
    from grpo_stack.cli.render import parser

    lines = [ln.strip() for ln in rendered_all[values_name].notes.splitlines() if ln.strip().startswith("grpo-render")]
    assert lines
    for line in lines:
        values_file = str(repo_root / "values" / f"{values_name}.yaml")
        argv = shlex.split(line.replace("<your values file>", values_file))
        try:
            parser().parse_args(argv[1:])
        except SystemExit as exc:
            pytest.fail(f"NOTES.txt command is rejected by grpo-render (exit {exc.code}): {line}")


def _hook(rendered, name: str) -> tuple[dict, str]:
    pod = component(rendered, "Pod", name)
    assert pod["metadata"]["annotations"]["helm.sh/hook"] == "test"
    c = pod["spec"]["containers"][0]
    return pod, "\n".join([*(c.get("command") or []), *(c.get("args") or [])])


def _service_url(rendered, name: str, path: str) -> str:
    svc = component(rendered, "Service", name)
    port = svc["spec"]["ports"][0]["port"]
    return f"http://{svc['metadata']['name']}.{NAMESPACE}.svc.cluster.local:{port}{path}"


def test_helm_test_sandbox_runs_print_42(rendered_all):
    r = rendered_all[SANDBOX]
    _, code = _hook(r, "sandbox-fusion-test")
    assert "print(42)" in code and _service_url(r, "sandbox-fusion", "/run_code") in code


def test_helm_test_reward_scores_known_answer(rendered_all):
    r = rendered_all[REWARD]
    _, code = _hook(r, "reward-service-test")
    assert _service_url(r, "reward-service", "/score") in code
    assert re.search(r'label\\?":', code) and "42" in code  # the trainer's request (reward-service/files)


def test_helm_test_vllm_lists_models(render_values):
    r = render_values(SANDBOX, EVAL_PHASE)
    _, code = _hook(r, "vllm-test")
    assert _service_url(r, "vllm", "/v1/models") in code
