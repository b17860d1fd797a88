"""The miles tier's cases: every shipped miles values file and variants of them, each built by the project's one
builder, its storage staged the way a run finds it (grpo-data's miles output, the model directory), and the reward
service (plus the test sandbox for code routes) that case's release would call.

What is not real, and why: the storage mount is a temporary directory (global.storage.mountPath is the only value
changed, so every path the builder emits points into it); the converted torch_dist checkpoint is an empty
directory (the conversion needs GPUs); the model directory holds the model's architecture fields in config.json and
a byte-level tokenizer, not the weights; the source rows grpo-data converts are written by tests/data/sources.py in
each dataset's own layout.
"""

from __future__ import annotations

import json
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grpo_stack.job import BuiltJob, build
from grpo_stack.localcluster.ports import free_port
from grpo_stack.render import Rendered, job_spec, render
from grpo_stack.values import load_values_file

from tests.conftest import with_overrides

REPO_ROOT = Path(__file__).resolve().parents[2]
MODEL_SCRIPTS = json.loads((Path(__file__).with_name("model_scripts.json")).read_text())
SHIPPED = ("miles-qwen3-4b", "miles-qwen3-30b-a3b")
# p5en.48xlarge's H200 as the instance catalogue lists it (tools/grpo_stack/catalog/instances.py).
GPU = {"name": "NVIDIA H200", "total_memory": 141 * 10**9, "capability": [9, 0]}

MATH = [("What is 1+1?", "2"), ("What is 2+3?", "5")]
AIME = [("Find the remainder when 2024 is divided by 1000.", 24)]
SUM_TESTS = {"inputs": ["1 2\n", "5 7\n"], "outputs": ["3\n", "12\n"]}
CODE = [("Read two integers and print their sum.", SUM_TESTS)]
TACO_FILE = "data/taco/taco.jsonl"

_SERVICE = {"global.components.rewardService": True, "global.job.reward.kind": "service"}
_SANDBOX = {"global.components.rewardService": True, "global.components.sandboxFusion": True,
            "global.job.reward.kind": "sandbox", "global.job.data.trainFiles": [TACO_FILE],
            "reward-service.routes": {"math_dapo": "math", "aime2024": "math", "taco": "code"},
            "fsx-utils.data.train": ["taco"]}
EXTERNAL_URL = "http://team-scorer.grpo.svc.cluster.local:9000/score"


# miles' Prometheus collector listens here in the step-metrics case (free when the module is imported, and outside
# the ephemeral range no other socket is given meanwhile).
STEP_METRICS_PORT = free_port()
STEP_METRICS_CASE = "4b-step-metrics"

# name -> (shipped file, values overrides). Each reward kind, colocated and disaggregated, every resume mode,
# dynamic batch on and off, extraArgs.
VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "miles-qwen3-4b": ("miles-qwen3-4b", {}),
    "miles-qwen3-30b-a3b": ("miles-qwen3-30b-a3b", {}),
    "4b-builtin": ("miles-qwen3-4b", {"global.job.reward.kind": "builtin"}),
    "4b-sandbox": ("miles-qwen3-4b", _SANDBOX),
    "4b-external": ("miles-qwen3-4b", {"global.job.reward.kind": "external", "global.job.reward.url": EXTERNAL_URL}),
    "4b-disaggregated": ("miles-qwen3-4b", {"global.cluster.nodes": 2, "global.job.miles.colocate": False,
                                            "global.job.miles.actorNodes": 1}),
    "4b-resume-auto": ("miles-qwen3-4b", {"global.job.resume": {"mode": "auto"}}),
    "4b-resume-from-path": ("miles-qwen3-4b", {"global.job.resume": {"mode": "fromPath",
                                                                     "path": "checkpoints/earlier-run"}}),
    "4b-fixed-batch": ("miles-qwen3-4b", {"global.job.miles.useDynamicBatchSize": False,
                                          "global.job.miles.maxTokensPerGpu": None}),
    "4b-extra-args": ("miles-qwen3-4b", {"global.job.miles.extraArgs": ["--lr-warmup-init", "1e-7",
                                                                         "--rollout-top-p", "0.95"]}),
    "30b-service": ("miles-qwen3-30b-a3b", _SERVICE),
    # console only: the tier's venv has no tensorboard, and the collector is what this case is about
    STEP_METRICS_CASE: ("miles-qwen3-4b", {"global.job.supervision.stepMetricsPort": STEP_METRICS_PORT,
                                           "global.job.trainer.logger": ["console"]}),
}


@dataclass
class Case:
    name: str
    values: dict[str, Any]
    rendered: Rendered
    spec: dict[str, Any]
    built: BuiltJob
    root: Path  # the storage mount of this case
    service_env: dict[str, str] = field(default_factory=dict)

    @property
    def job(self) -> dict[str, Any]:
        return self.values["global"]["job"]

    @property
    def kind(self) -> str:
        return self.job["reward"]["kind"]

    def model_script(self) -> dict[str, Any]:
        path = next(n.split(": ", 1)[1] for n in self.built.notes if n.startswith("model-args-script: "))
        return MODEL_SCRIPTS["scripts"][path.removeprefix("/root/miles/")]

    def argv(self) -> list[str]:
        """What the Ray job runs after `python3 train.py`: the built flags, then the model script's MODEL_ARGS
        (job/submit.py: `source <script> && exec "$@" "${MODEL_ARGS[@]}"`)."""
        argv = self.built.argv()
        assert argv[:2] == ["python3", "/root/miles/train.py"], argv[:2]
        return [*argv[2:], *self.model_script()["model_args"]]

    def flag(self, name: str) -> str | None:
        argv = self.argv()
        return argv[argv.index(name) + 1] if name in argv else None

    def on_storage(self, rel: str) -> Path:
        return self.root / rel


def make_case(name: str, tmp: Path) -> Case:
    base, overrides = VARIANTS[name]
    values = load_values_file(REPO_ROOT / "values" / f"{base}.yaml").data
    values = with_overrides(values, overrides)
    values = _drop_nones(values)
    rendered = render(values, release="grpo", namespace="grpo")
    spec = job_spec(rendered)
    root = tmp / name / "fsx"
    spec["storage"]["mountPath"] = str(root)
    return Case(name, values, rendered, spec, build(spec), root)


def _drop_nones(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _drop_nones(v) for k, v in node.items() if v is not None}
    return node


def reward_service_env(case: Case) -> dict[str, str]:
    """The reward service's configuration as the case's release renders it (its Deployment's env literals)."""
    for o in case.rendered.of_kind("Deployment"):
        for c in o.obj["spec"]["template"]["spec"]["containers"]:
            env = {e["name"]: e["value"] for e in c.get("env") or [] if "value" in e}
            if "REWARD_ROUTES" in env:
                return env
    raise AssertionError(f"{case.name}: the release renders no reward service")


def host_port(url: str) -> str:
    return urllib.parse.urlsplit(url).netloc


def stage(case: Case, python: Path, run_data, models: dict[str, Path]) -> None:
    """The files the run reads from storage: the model directory, the converted checkpoint directory, a checkpoint
    to resume from, and grpo-data's miles output for the train and validation files the values name."""
    import shutil

    from tests.data import sources

    from .conftest import build_model_dir

    script = case.model_script()
    if script["preset"] not in models:
        models[script["preset"]] = case.root.parent / "model-template"
        build_model_dir(python, models[script["preset"]], script["hf_config"])
    shutil.copytree(models[script["preset"]], case.on_storage(case.job["model"]["path"]))
    Path(case.built.prepare[0].output).mkdir(parents=True, exist_ok=True)
    resume = case.job.get("resume") or {}
    if resume.get("mode") == "fromPath":
        ckpt = case.on_storage(resume["path"])
        ckpt.mkdir(parents=True, exist_ok=True)
        (ckpt / "latest_checkpointed_iteration.txt").write_text("40")
    src = case.root.parent / "sources"
    train = case.on_storage(case.job["data"]["trainFiles"][0])
    if train.name == Path(TACO_FILE).name:
        run_data("prepare", "--dataset", "taco", "--source-dir", f"taco={sources.taco(src / 'taco', CODE, CODE)}",
                 "--revision", f"taco={'a' * 40}", "--output", str(train))
    else:
        run_data("prepare", "--dataset", "dapo-math-17k", "--source-dir",
                 f"dapo-math-17k={sources.dapo(src / 'dapo', MATH)}", "--output", str(train))
    val = case.on_storage(case.job["data"]["valFiles"][0])
    run_data("prepare", "--dataset", "aime", "--split", "test", "--source-dir",
             f"aime={sources.aime(src / 'aime', AIME)}", "--output", str(val))


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
