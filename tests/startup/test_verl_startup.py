"""The start-up tier: the verl command the builder emits, run for real up to the first call that needs a GPU.

For one values file per path (FSDP; Megatron; Megatron + LoRA) the command comes from the one builder
(`grpo_stack.job`) and runs as `python -m verl.trainer.main_ppo` in the start-up venv (images/verl's pins, CPU
builds) against a local Ray head on 127.0.0.1 that advertises 8 GPUs as logical resources. What the test
changes, and only that:

* every path under the storage mount (model, data, checkpoints) points into a temp dir, where a tiny model of
  the same architecture family (random weights, built with transformers at test time) and a tiny parquet
  dataset in verl's layout sit at the same relative paths;
* `trainer.nnodes` drops to 1 where the values ask for more (Qwen3-30B: 2, Qwen3-235B: 6): same 8-GPU node
  shape, fewer nodes, because 16 or 48 Ray workers do not fit a 2-core CI machine. Every other key, including
  the parallel layout and batch sizes, is the builder's;
* the reward function path /opt/grpo-stack/... is the file images/verl copies there (read from the Dockerfile).

Each path must end at one of its ALLOWED stop points (tests/startup/stops.py); any other ending fails with its
error. Then every module the path imports after that stop (engine, Megatron-Bridge, Transformer Engine, vLLM)
must be present (`importlib.util.find_spec`) and import, or fail only while loading a CUDA library.
"""

from __future__ import annotations

import json
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from grpo_stack import render as render_module
from grpo_stack.catalog.models import MODELS
from grpo_stack.job import build

from .conftest import REPO_ROOT, ray_env, startup_python
from .stops import CUDA_LAZY_INIT, NCCL_PROCESS_GROUP, TE_CORE_LIBRARY, TE_CUDA_LIBRARY, StopPoint, judge

pytestmark = pytest.mark.startup

RUN_TIMEOUT_S = 170  # the budget is under 3 minutes per path on 2 cores
NODE_GPUS = 8
DOCKERFILE = REPO_ROOT / "images" / "verl" / "Dockerfile"
LOG_DIR = REPO_ROOT / "out" / "startup"  # each run's full output, kept for reading after a failure


@dataclass(frozen=True)
class Path_:
    values: str
    arch: str  # the tiny model's family: qwen3 (dense) or qwen3_moe
    allowed: tuple[StopPoint, ...]
    later_imports: tuple[str, ...]  # imported after the stop point on this path; must be installed


FSDP_LATER = ("verl.workers.engine.fsdp.transformer_impl", "verl.workers.rollout.vllm_rollout.vllm_async_server")
MEGATRON_LATER = ("verl.workers.engine.megatron.transformer_impl", "verl.models.mcore.bridge", "megatron.bridge",
                  "megatron.bridge.training.utils.train_utils", "transformer_engine.pytorch",
                  "verl.workers.rollout.vllm_rollout.vllm_async_server")
LORA_LATER = MEGATRON_LATER + ("megatron.bridge.peft.utils", "megatron.bridge.peft.lora", "vllm.lora.request")

ALLOWED = (TE_CUDA_LIBRARY, TE_CORE_LIBRARY, NCCL_PROCESS_GROUP, CUDA_LAZY_INIT)
PATHS = {
    "fsdp": Path_("qwen3-8b", "qwen3", ALLOWED, FSDP_LATER),
    "megatron": Path_("qwen3-30b", "qwen3_moe", ALLOWED, MEGATRON_LATER),
    "megatron-lora": Path_("qwen3-235b", "qwen3_moe", ALLOWED, LORA_LATER),
}


def reward_file_in_image() -> tuple[str, Path]:
    """(destination in the image, source in the repo) of the Dockerfile line that bakes the reward client."""
    for line in DOCKERFILE.read_text().splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "COPY" and parts[1].endswith("verl_remote_reward.py"):
            return parts[2], REPO_ROOT / parts[1]
    raise AssertionError(f"{DOCKERFILE}: no COPY of verl_remote_reward.py")


def built_job(shipped_values, name: str):
    spec = render_module.job_spec(render_module.render(shipped_values[name], release="grpo", namespace="grpo"))
    return spec, build(spec)


def hydra_args(job) -> dict[str, str]:
    out = {}
    for arg in job.argv()[len(job.entrypoint):]:
        key, _, value = arg.partition("=")
        out[key] = value
    return out


def localise(job, spec, root: Path) -> tuple[list[str], dict[str, str]]:
    """The builder's argv with storage paths under `root`, one node, the baked reward file; plus what changed."""
    mount = spec["storage"]["mountPath"].rstrip("/")
    image_path, repo_path = reward_file_in_image()
    argv = [str(startup_python()), *job.entrypoint[1:]]
    changed: dict[str, str] = {}
    for arg in job.argv()[len(job.entrypoint):]:
        key, _, value = arg.partition("=")
        new = value.replace(mount + "/", str(root) + "/")
        if key == "trainer.nnodes" and int(value) > 1:
            new = "1"
        if image_path in new:
            new = new.replace(image_path, str(repo_path))
        if new != value:
            changed[key] = new
        argv.append(f"{key}={new}")
    return argv, changed


def build_fixtures(python: Path, args: dict[str, str], root: Path, mount: str, arch: str) -> None:
    """The tiny model and dataset at the (localised) paths the command names."""
    model_dir = Path(args["actor_rollout_ref.model.path"])
    files = [Path(p) for key in ("data.train_files", "data.val_files") for p in args[key].strip("[]").split(",")]
    rows = 4 * int(args["data.train_batch_size"])
    work = root / ".fixtures"
    out = subprocess.run([str(python), str(Path(__file__).with_name("build_fixtures.py")), str(work),
                          "--arch", arch, "--rows", str(rows)], capture_output=True, text=True, timeout=300,
                         env=ray_env())
    assert out.returncode == 0, out.stderr[-3000:]
    model_dir.parent.mkdir(parents=True, exist_ok=True)
    (work / "model").rename(model_dir)
    for i, target in enumerate(files):
        target.parent.mkdir(parents=True, exist_ok=True)
        split = "train" if i == 0 else "val"
        target.write_bytes((work / "data" / f"{split}.parquet").read_bytes())


@pytest.mark.parametrize("path_name", sorted(PATHS))
def test_verl_run_reaches_an_allowed_stop(path_name, shipped_values, ray_head, tmp_path):
    """The built command starts: config, Ray, data, tokenizer, worker placement and model-config loading all
    pass, and the run ends exactly where a GPU is first needed (the failure class this prevents: a run that
    dies after GPUs are requested, on a missing package, a bad key or a wrong path)."""
    path = PATHS[path_name]
    python = startup_python()
    spec, job = built_job(shipped_values, path.values)
    preset = (spec["job"].get("model") or {}).get("preset")
    if preset in MODELS:  # the tiny model must be of the values' architecture family (dense vs MoE)
        assert MODELS[preset].is_moe == (path.arch == "qwen3_moe"), f"fixture family mismatch for {preset}"
    assert int(hydra_args(job)["trainer.n_gpus_per_node"]) == NODE_GPUS == ray_head.gpus, "per-node shape"
    root = tmp_path / "storage"
    argv, changed = localise(job, spec, root)
    args = dict(a.partition("=")[::2] for a in argv[3:])
    build_fixtures(python, args, root, spec["storage"]["mountPath"], path.arch)
    env = {**ray_env(), "RAY_ADDRESS": ray_head.address, "HYDRA_FULL_ERROR": "1",
           "GRPO_REWARD_URL": "http://127.0.0.1:9/score", "WANDB_MODE": "disabled"}
    start = time.monotonic()
    try:
        proc = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
        output, rc = proc.stdout + proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as exc:
        output = (exc.stdout or b"").decode(errors="replace") + (exc.stderr or b"").decode(errors="replace")
        pytest.fail(f"{path_name}: no ending within {RUN_TIMEOUT_S} s (a hang is not a stop point)\n"
                    f"changed: {changed}\n{output[-6000:]}", pytrace=False)
    elapsed = time.monotonic() - start
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    (LOG_DIR / f"{path_name}.log").write_text(output)
    stop, why = judge(output, path.allowed)
    print(f"[startup] {path_name} ({path.values}): rc={rc} in {elapsed:.1f} s, stop: "
          f"{stop.describe() if stop else why}; changed: {sorted(changed)}")
    assert rc != 0, f"{path_name}: main_ppo exited 0 on a machine without GPUs\n{output[-4000:]}"
    assert stop is not None, f"{path_name}: {why}\n--- output tail ---\n{output[-6000:]}"
    # Env vars the builder routes through verl's Ray runtime env reach ray.init (e.g. VLLM_LORA_DISABLE_PDL).
    init_line = next((ln for ln in output.splitlines() if ln.startswith("ray init kwargs:")), "")
    for arg in argv:
        if arg.startswith("+ray_kwargs.ray_init.runtime_env.env_vars."):
            name = arg.split("=", 1)[0].rsplit(".", 1)[1]
            assert f"'{name}': '1'" in init_line, f"{name} not passed to ray.init: {init_line[:2000]}"


def test_reward_file_the_image_bakes_is_the_one_the_command_names():
    """images/verl copies the client to exactly the path job/verl.py puts in the command (a mismatch is a
    FileNotFoundError at the first reward, hours into a run)."""
    from grpo_stack.job.verl import REMOTE_REWARD_FN

    image_path, repo_path = reward_file_in_image()
    assert image_path == REMOTE_REWARD_FN
    assert repo_path.is_file()


@pytest.fixture(scope="module")
def later_imports():
    """One probe process for every path's modules (imports cost tens of seconds on 2 cores)."""
    python = startup_python()
    probe = Path(__file__).with_name("import_probe.py")
    modules = sorted({m for p in PATHS.values() for m in p.later_imports})
    out = subprocess.run([str(python), str(probe), *modules], capture_output=True, text=True, timeout=400,
                         env=ray_env())
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("path_name", sorted(PATHS))
def test_modules_used_after_the_stop_are_installed(path_name, later_imports):
    """Each module the path imports after its stop point is present and imports, or fails only in loading a
    CUDA library (an ImportError is never acceptable: the image would hit it on GPUs)."""
    results = {m: later_imports[m] for m in PATHS[path_name].later_imports}
    bad = {m: r for m, r in results.items() if r["verdict"] not in ("imported", "cuda-library")}
    print(f"[startup] {path_name} later imports: " + ", ".join(f"{m}={r['verdict']}" for m, r in results.items()))
    assert not bad, json.dumps(bad, indent=1)
