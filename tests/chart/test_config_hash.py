"""`helm upgrade` recreates the Ray pods only when what they consume changes.

The RayCluster uses KubeRay's Recreate upgrade strategy: any change to a pod template kills every Ray pod, and
with it a training run. The predecessor hashed `toJson .Values` plus the job into the template, so switching on
the eval server or changing saveFreq recreated the GPU cluster mid-run. The job is read from its ConfigMap at
submit time, so job settings must reach the ConfigMap and nothing else.
"""

from __future__ import annotations

import copy
import json

import pytest
from grpo_stack.render import RenderError, render

from tests.conftest import NAMESPACE, RELEASE, own_check_refuses

HASH = "grpo-stack.io/config-hash"


def raycluster(rendered) -> dict:
    (rc,) = rendered.of_kind("RayCluster")
    return rc.obj


def hashes(rendered) -> set[str]:
    spec = raycluster(rendered)["spec"]
    groups = [spec["headGroupSpec"], *spec["workerGroupSpecs"]]
    return {g["template"]["metadata"]["annotations"][HASH] for g in groups}


def pods_as_run(rendered) -> str:
    """What the Ray pods are made of: rayStartParams, pod specs and pod labels and annotations of every group (not
    replicas, not the hash)."""
    spec = raycluster(rendered)["spec"]
    groups = [spec["headGroupSpec"], *spec["workerGroupSpecs"]]

    def metadata(g):
        meta = g["template"]["metadata"]
        return meta.get("labels"), {k: v for k, v in (meta.get("annotations") or {}).items() if k != HASH}
    return json.dumps([(g.get("rayStartParams"), g["template"]["spec"], metadata(g)) for g in groups], sort_keys=True)


def job_configmap(rendered) -> dict:
    return next(o.obj for o in rendered.of_kind("ConfigMap") if "job.json" in (o.obj.get("data") or {}))


def one_hash(rendered) -> str:
    (h,) = hashes(rendered)
    return h


# Changes that must leave the RayCluster untouched.
UNTOUCHED = {
    "vllm on": {"global.components.vllm": True},
    "vllm and lm-eval on": {"global.components.vllm": True, "global.components.lmEval": True},
    "sandbox on": {"global.components.sandboxFusion": True},
    "saveFreq": {"global.job.trainer.saveFreq": 7},
    "testFreq": {"global.job.trainer.testFreq": 3},
    "experiment": {"global.job.trainer.experiment": "another-run"},
    "totalEpochs": {"global.job.trainer.totalEpochs": 2},
    "samplesPerPrompt": {"global.job.rollout.samplesPerPrompt": 4},
    "trainBatchSize": {"global.job.verl.batch.trainBatchSize": 256},
    "ppoMiniBatchSize": {"global.job.verl.batch.ppoMiniBatchSize": 16},
    "temperature": {"global.job.rollout.temperature": 0.7},
    "maxResponse": {"global.job.lengths.maxResponse": 2048},
    "trainFiles": {"global.job.data.trainFiles": ["data/other/train.parquet"]},
    "model.path (verl)": {"global.job.model.path": "models/Qwen3-8B-sft"},
    "nodes (replicas only)": {"global.cluster.nodes": 2},
    "rayVersion label": {"raycluster.rayVersion": "2.53.1"},
}


@pytest.mark.parametrize("change", list(UNTOUCHED), ids=list(UNTOUCHED))
def test_eval_toggles_and_job_settings_leave_the_ray_pods_alone(change, render_values):
    """Eval components and job settings (read from the ConfigMap at submit time) never recreate the GPU pods."""
    before, after = render_values("qwen3-8b"), render_values("qwen3-8b", UNTOUCHED[change])
    assert pods_as_run(after) == pods_as_run(before)
    assert hashes(after) == hashes(before)


@pytest.mark.parametrize("change", ["saveFreq", "trainBatchSize", "trainFiles", "experiment"])
def test_job_settings_reach_the_job_configmap(change, render_values):
    """The other half of the contract: the submit reads the new job from the ConfigMap."""
    before, after = render_values("qwen3-8b"), render_values("qwen3-8b", UNTOUCHED[change])
    assert job_configmap(after)["data"] != job_configmap(before)["data"]


# Each input the Ray pods consume: changing it must change the hash (KubeRay then recreates the pods).
POD_INPUTS = {
    "image tag": ("qwen3-8b", {"raycluster.image.tag": "0.9.1-ray2.53.0-r3"}),
    "image digest": ("qwen3-8b", {"raycluster.image.digest": "sha256:" + "a" * 64}),
    "nccl.debug": ("qwen3-8b", {"raycluster.nccl.debug": "INFO"}),
    "head instance type": ("qwen3-8b", {"raycluster.head.instanceType": "m6i.8xlarge"}),
    "head cpu": ("qwen3-8b", {"raycluster.head.resources.cpu": "6"}),
    "worker memory": ("qwen3-8b", {"raycluster.worker.resources.memory": "1500Gi"}),
    "shm size": ("qwen3-8b", {"raycluster.worker.shmSize": "128Gi"}),
    "dashboard exposed": ("qwen3-8b", {"raycluster.dashboard.exposed": True}),
    "gpu instance type": ("qwen3-8b", {"global.cluster.gpuInstanceType": "p5.48xlarge",
                                       "global.cluster.efaPerNode": 32}),
    "gpus per node": ("qwen3-8b", {"global.cluster.gpusPerNode": 4}),
    "efa per node": ("qwen3-8b", {"global.cluster.efaPerNode": 8}),
    "storage claim": ("qwen3-8b", {"global.storage.claimName": "fsx-other"}),
    "storage mount": ("qwen3-8b", {"global.storage.mountPath": "/data"}),
    "hf token secret": ("qwen3-8b", {"global.secrets.hfToken.name": "hf-token-2"}),
    "reward service on (GRPO_REWARD_URL)": ("qwen3-8b", {"global.components.rewardService": True}),
    "external reward URL (env)": ("qwen3-8b", {"global.job.reward.kind": "external",
                                              "global.job.reward.url": "https://reward.example.com/score"}),
    "checkpointDir (writable mount)": ("qwen3-8b", {"global.job.trainer.checkpointDir": "checkpoints/other"}),
    "model.path (miles conversion mount)": ("miles-qwen3-4b", {"global.job.model.path": "models/Qwen3-4B-sft"}),
    "a pod annotation (global.pod)": ("qwen3-8b", {"global.pod.annotations": {"karpenter.sh/do-not-disrupt": "true"}}),
    "a worker label": ("qwen3-8b", {"raycluster.worker.pod.labels": {"cost-center": "rl"}}),
    "a head node selector term": ("qwen3-8b", {"raycluster.head.pod.nodeSelector": {"karpenter.sh/capacity-type":
                                                                                    "on-demand"}}),
    "the worker's identity": ("qwen3-8b", {"raycluster.worker.pod.serviceAccountName": "trainer"}),
    "the image registry": ("qwen3-8b", {"global.imageRegistry": "registry.local:5000"}),
}


@pytest.mark.parametrize("change", list(POD_INPUTS), ids=list(POD_INPUTS))
def test_each_ray_pod_input_changes_the_hash(change, render_values):
    name, override = POD_INPUTS[change]
    before, after = render_values(name), render_values(name, override)
    assert pods_as_run(after) != pods_as_run(before), "the change does not reach the Ray pods at all"
    assert one_hash(after) != one_hash(before)


def _leaves(node, path=()):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _leaves(v, (*path, i))
    else:
        yield path, node


def _mutations(value):
    """Schema-plausible replacements for one leaf, tried in order."""
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [value + 1, value * 2, max(1, value - 1)]
    if isinstance(value, float):
        return [value / 2]
    if isinstance(value, str):
        out = [str(int(value) + 1)] if value.isdigit() else []
        return out + [value + "x", value + "-x", value[:-1] + "1" if value else "x"]
    return []


def _set(values, path, new):
    out = copy.deepcopy(values)
    node = out
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = new
    return out


@pytest.mark.parametrize("name", ["qwen3-235b", "miles-qwen3-4b"])
def test_hash_changes_exactly_when_the_ray_pods_change(name, shipped_values):
    """Every single-leaf change of the merged values: the hash moves if and only if the Ray pods would run
    differently. A hash input that the pods never see would recreate them for nothing; a pod input the hash
    misses would be silently fine for KubeRay (the template changes) but makes the annotation lie."""
    from grpo_stack.render import merged_values

    base_values = merged_values(shipped_values[name])
    base = render(shipped_values[name], release=RELEASE, namespace=NAMESPACE)
    checked, moved = 0, 0
    for path, value in _leaves(base_values):
        if "global" in path[1:] or path[0] == "grpo-common":
            continue  # the copies of `global` Helm puts in each subchart section
        for new in _mutations(value):
            changed = _set(base_values, path, new)
            if own_check_refuses(changed):
                continue  # values helm install refuses; what it takes renders without Helm's schema pass
            try:
                after = render(changed, release=RELEASE, namespace=NAMESPACE, helm_schema=False)
            except RenderError:
                continue
            if not after.of_kind("RayCluster"):
                continue  # a leaf that switches the Ray cluster off (a component toggle) has no pods to compare
            pods_changed = pods_as_run(after) != pods_as_run(base)
            assert (one_hash(after) != one_hash(base)) == pods_changed, (".".join(map(str, path)), value, new)
            checked += 1
            moved += pods_changed
            break
    print(f"{name}: {checked} single-leaf changes rendered, {moved} changed the Ray pods")
    assert checked >= 60 and moved >= 10, (checked, moved)
