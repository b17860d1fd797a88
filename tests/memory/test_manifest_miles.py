"""A miles command in a RayJob outside the chart is modelled as the builder's own: the command grpo-render prints for
a shipped miles values file, pasted into a RayJob on the same instance type, gives the same per-GPU phases as the
values file (the manifest path reads the arguments; the values path reads the builder's typed arguments). Where
the check stops: both sides are this model; that miles accepts the command is tests/job's miles tier."""

from __future__ import annotations

import json

import pytest
import yaml
from grpo_stack.cli.render import main
from grpo_stack.memory import estimate
from grpo_stack.memory.manifest import rayjob_run
from grpo_stack.paths import REPO_ROOT


def _rayjob(command: str, instance: str, replicas: int) -> dict:
    pod = {"nodeSelector": {"node.kubernetes.io/instance-type": instance},
           "containers": [{"name": "ray-worker", "image": "rayproject/ray:2.53.0-py311-gpu"}]}
    return {"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": {"name": "miles"},
            "spec": {"entrypoint": command, "rayClusterSpec": {"workerGroupSpecs": [
                {"groupName": "gpu", "replicas": replicas, "template": {"spec": pod}}]}}}


@pytest.mark.parametrize("name", ["miles-qwen3-4b.yaml", "miles-qwen3-30b-a3b.yaml"])
def test_a_shipped_miles_command_in_a_rayjob_has_the_values_files_phases(capsys, name):
    values = str(REPO_ROOT / "values" / name)
    cluster = yaml.safe_load(open(values))["global"]["cluster"]
    assert main([values, "--job", "--format", "shell"]) == 0
    command = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("python3 "))
    assert main([values, "--job", "--memory", "--format", "json"]) == 0
    expected = {p["phase"]: p["gib"] for p in json.loads(capsys.readouterr().out)["phases"]}
    run = rayjob_run(_rayjob(command, cluster["gpuInstanceType"], cluster["nodes"]))
    assert run is not None and run.framework == "miles"
    got = {p.name: round(p.total / 2**30, 3) for p in estimate(run).phases}
    assert got == pytest.approx(expected, abs=0.006)  # the view rounds to 0.01 GiB


def test_a_disaggregated_miles_command_without_its_rollout_gpus_is_not_guessed():
    command = ("python3 /root/miles/train.py --hf-checkpoint /fsx/models/Qwen3-4B --actor-num-nodes 1 "
               "--actor-num-gpus-per-node 8 --tensor-model-parallel-size 2")
    assert rayjob_run(_rayjob(command, "p5en.48xlarge", 2)) is None
    assert rayjob_run(_rayjob(command + " --rollout-num-gpus 8", "p5en.48xlarge", 2)).nodes == 2
