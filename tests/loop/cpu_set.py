"""Everything the loop tier adds after `grpo_stack.job.build`: one listed set, a reason per entry.

The run is the builder's command from values/qwen3-8b.yaml + tests/loop/overlay.yaml. On top of it, and only this:

* `override`: a Hydra override the build does not emit (the key must be absent from the built command);
* `remap`:    a built value replaced (the key must be present): a path that exists in the image, not here;
* `env`:      the Ray head's environment, which every driver, actor and vLLM process of the run inherits (in
              the product the image and the chart set the process environment).

How it reaches the run: tests/loop/submit_cpu.py runs the project's own in-pod submit (`grpo_stack.job.submit`
main) with its gate's BuiltJob extended by the `override` and `remap` entries; the harness starts the Ray head
with the `env` entries. tests/loop/test_loop.py asserts the set is exactly the table in docs/loop.md and that the
driver received the builder's argv plus these entries and nothing else.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
REWARD_CLIENT = REPO_ROOT / "images" / "reward-service" / "clients" / "verl_remote_reward.py"


@dataclass(frozen=True)
class Entry:
    kind: str  # override | remap | env
    key: str
    value: str
    reason: str


CPU_SET: tuple[Entry, ...] = (
    Entry("override", "actor_rollout_ref.actor.strategy", "fsdp2",
          "FSDP1 did not run on a CPU in issue 31's trial (verl wraps it with sync_module_states=True, verl/workers/"
          "engine/fsdp/transformer_impl.py:444; not probed here); FSDP2 (fully_shard) runs on gloo. The shipped "
          "files leave verl's default, FSDP1"),
    Entry("override", "+actor_rollout_ref.model.override_config.attn_implementation", "sdpa",
          "verl asks transformers for flash_attention_2 unless told otherwise (verl/workers/config/model.py:185), "
          "a CUDA kernel package; sdpa is PyTorch's own"),
    Entry("override", "actor_rollout_ref.rollout.enforce_eager", "true",
          "no CUDA graphs on a CPU, and no torch.compile of the model (a C++ inductor build: minutes on 2 cores)"),
    Entry("override", "+actor_rollout_ref.rollout.enable_sleep_mode", "false",
          "vLLM's sleep mode is CUDA's cumem allocator (vllm/device_allocator/cumem.py); its CPU platform has none"),
    Entry("override", "actor_rollout_ref.rollout.free_cache_engine", "false",
          "freeing the cache engine between steps is vLLM's sleep/wake_up (verl vllm_async_server.py:854)"),
    Entry("override", "actor_rollout_ref.rollout.agent.num_workers", "1",
          "verl starts 8 agent-loop worker processes by default; 2 cores"),
    Entry("override", "reward.num_workers", "1",
          "verl starts 8 reward-loop worker processes by default; 2 cores"),
    Entry("override", "transfer_queue.backend.SimpleStorage.num_data_storage_units", "1",
          "the v1 trainer's TransferQueue starts 8 storage actors by default; 2 cores"),
    Entry("override", "data.dataloader_num_workers", "0",
          "8 dataloader worker processes by default; 8 prompts in all"),
    Entry("override", "actor_rollout_ref.rollout.calculate_log_probs", "true",
          "the rollout returns its log-probs, so verl logs the rollout/actor drift (training/rollout_probs_diff_*) "
          "that the learning-signal test and the skipped-sync negative control read"),
    Entry("override", "trainer.rollout_data_dir", "{storage}/rollouts",
          "verl dumps each step's samples with their group (uid) and score, one JSONL per step, which the "
          "learning-signal test reads for the score variance within a group"),
    Entry("remap", "reward.custom_reward_function.path", str(REWARD_CLIENT),
          "images/verl copies this file to /opt/grpo-stack/verl_remote_reward.py; here it is read where it lives"),
    Entry("env", "PATH", "<the loop venv's bin>:$PATH",
          "the command starts `python3`: in the image the one with verl installed, here the loop venv's"),
    Entry("env", "PYTHONPATH", str(HERE),
          "makes the CPU plugin (tests/loop/verl_cpu.py) and the scenario events importable in every process"),
    Entry("env", "VERL_USE_EXTERNAL_MODULES", "verl_cpu,loop_events",
          "verl's plugin hook: imported by `import verl` in every process (verl/__init__.py)"),
    Entry("env", "VERL_PLATFORM", "cpu",
          "selects the platform tests/loop/verl_cpu.py registers (verl/plugin/platform/platform_manager.py)"),
    Entry("env", "VERL_ENGINE_DEVICE", "cuda",
          "verl registers its FSDP engine for cuda and npu only (verl/workers/engine/fsdp/transformer_impl.py:1143); "
          "the engine lookup key (verl/workers/engine/base.py:405) picks that same engine, which runs on the CPU "
          "platform's device"),
    Entry("env", "VLLM_CPU_KVCACHE_SPACE", "1",
          "vLLM-CPU sizes its KV cache from this (GiB); unset, it takes gpu_memory_utilization x host memory"),
    Entry("env", "VLLM_CPU_OMP_THREADS_BIND", "nobind",
          "vLLM-CPU pins its OpenMP threads to cores by default (auto), which on a shared 2-core machine starves "
          "the trainer in the same step"),
    Entry("env", "GRPO_REWARD_URL", "<the reward service's /score on loopback>",
          "the chart sets it on the Ray pods to the release's reward service; here the service runs on loopback"),
)


def overrides_and_remaps() -> tuple[Entry, ...]:
    return tuple(e for e in CPU_SET if e.kind in ("override", "remap"))


def env(reward_url: str, venv_bin: str, path: str) -> dict[str, str]:
    out = {e.key: e.value for e in CPU_SET if e.kind == "env"}
    out["GRPO_REWARD_URL"] = reward_url
    out["PATH"] = f"{venv_bin}:{path}"
    return out


def extend(built, storage: str, job_env: dict[str, str] | None = None):
    """The BuiltJob with the `override` and `remap` entries applied ({storage}: the spec's storage mount) and
    `job_env` added to its runtime env; refuses an override of a key the build emits and a remap of one it does
    not."""
    from grpo_stack.job.args import Arg

    args = list(built.args)
    keys = {a.key: i for i, a in enumerate(args)}
    for e in overrides_and_remaps():
        key = e.key.lstrip("+")
        if e.kind == "override":
            if key in keys or e.key in keys:
                raise AssertionError(f"{e.key}: the build emits it; a loop override would hide the build's value")
            value = _typed(e.value.replace("{storage}", storage.rstrip("/")))
            args.append(Arg(e.key, value, "tests/loop/cpu_set.py"))
        else:
            if key not in keys:
                raise AssertionError(f"{e.key}: the build does not emit it; nothing to remap")
            args[keys[key]] = Arg(key, e.value, "tests/loop/cpu_set.py")
    env_pairs = tuple(built.env) + tuple(sorted((job_env or {}).items()))
    return dataclasses.replace(built, args=tuple(args), env=env_pairs)


def _typed(text: str):
    if text in ("true", "false"):
        return text == "true"
    return int(text) if text.isdigit() else text
