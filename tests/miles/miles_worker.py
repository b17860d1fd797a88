"""Drive radixark/miles' own code with one emitted argv. Runs in the miles venv (tests/miles/setup_miles_venv.sh).

stdin: {"cases": [{"argv": [the train.py argv after the script name], "env": {the job's runtime env},
                   "gpu": {"count", "name", "total_memory", "capability"},
                   "rm_host": {"from": "host:port", "to": "host:port"} | null,
                   "score": [{"dataset": "train" | <eval dataset name>, "index": row, "response": text}],
                   "metrics": {"rollouts": N} | absent}, ...]}
stdout (last line): {"results": [{"ok": true, "args": {...}, "datasets": {name: [sample, ...]}, "rewards": [...]}
                     or {"ok": false, "stage": "parse" | "data" | "reward" | "metrics",
                         "error": {"type", "module", "message"}}]}
One process runs every case in turn (miles' imports take most of the time); each case gets its own sys.argv and
the job's runtime environment (job/miles.py RUNTIME_ENV, which Megatron's validation reads).

What runs is miles' own code, in the order train.py reaches it:
1. `miles.utils.arguments.parse_args()` on sys.argv = ["train.py", *argv]: miles' and its Megatron fork's parsers,
   `hf_validate_args` against the model directory's config.json, Megatron's `validate_args`, miles' own
   validation and SGLang's. It stops there: train.py's next step creates Ray placement groups on GPUs.
2. The training rows through `miles.rollout.data_source.RolloutDataSource(args)` (the rollout manager's data
   source: miles' tokenizer loading from --hf-checkpoint, `Dataset` with the parsed keys and chat template), and
   each evaluation dataset through `miles.utils.data.Dataset` with the keys miles resolved for it
   (args.eval_datasets), called as miles' eval rollout calls it (miles/rollout/sglang_rollout.py).
3. `miles.rollout.rm_hub.batched_async_rm(args, samples)`, the reward entry of miles' rollout, on those samples
   with the given responses; the score is read from the reply as miles reads it: `Sample.get_reward_value(args)`
   for training rows, `sample.reward[args.eval_reward_key or args.reward_key]` for evaluation rows (the line of
   miles' eval rollout, sglang_rollout.py).

4. With "metrics" in the case (the step-metrics port set): miles' own tracking on the parsed args
   (`miles.utils.tracking_utils.init_tracking`, primary, in a local Ray: `--use-prometheus` starts its collector
   actor on the parsed `--prometheus-port`), then for each rollout the calls miles' training loop makes: its timers
   (`miles.utils.timer.timer`), `log_train_step` and `log_perf_data_raw`; the collector's /metrics page is read
   after each rollout. Where it stops: the numbers are timed sleeps, not a training step (miles cannot train on a
   CPU), and log_rollout_data (the rewards and lengths) needs Megatron's process groups, so it is not called.

The one stub: torch.cuda's device queries (is_available, device_count, get_device_properties,
get_device_capability, current_device) report the catalogued GPU, for the validation code that asks them. No
CUDA call is made; nothing here allocates on a device. `rm_host` rewrites only host:port of the parsed --rm-url
(the release Service's DNS name -> the loopback server); the scheme and path miles posts to stay as emitted.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import traceback
import warnings
from types import SimpleNamespace

warnings.filterwarnings("ignore")
logging.disable(logging.WARNING)

# What the tests read back from the parsed namespace (everything the values decide, and miles' derived fields).
ARG_FIELDS = (
    "hf_checkpoint", "ref_load", "load", "save", "save_interval", "no_load_optim", "finetune", "start_rollout_id",
    "actor_num_nodes", "actor_num_gpus_per_node", "colocate", "rollout_num_gpus", "rollout_num_gpus_per_engine",
    "sglang_mem_fraction_static", "tensor_model_parallel_size", "sequence_parallel", "pipeline_model_parallel_size",
    "context_parallel_size", "expert_model_parallel_size", "expert_tensor_parallel_size", "num_layers",
    "hidden_size", "num_experts", "prompt_data", "input_key", "label_key", "metadata_key", "apply_chat_template",
    "rollout_shuffle", "num_rollout", "rollout_batch_size", "n_samples_per_prompt", "rollout_max_prompt_len",
    "rollout_max_response_len", "rollout_temperature", "global_batch_size", "micro_batch_size",
    "use_dynamic_batch_size", "max_tokens_per_gpu", "log_probs_max_tokens_per_gpu", "lr", "lr_warmup_iters",
    "lr_decay_style", "weight_decay", "clip_grad", "optimizer", "adam_beta1", "adam_beta2", "advantage_estimator",
    "use_kl_loss", "kl_loss_coef", "kl_coef", "kl_loss_type", "entropy_coef", "eps_clip", "eps_clip_high",
    "eval_prompt_data", "eval_interval", "n_samples_per_eval_prompt", "eval_temperature", "eval_top_p", "seed",
    "rm_type", "rm_url", "custom_rm_path", "reward_key", "eval_reward_key", "log_reward_category",
    "use_tensorboard", "tb_project_name", "tb_experiment_name", "use_wandb", "wandb_project", "wandb_group",
    "use_prometheus", "prometheus_port", "prometheus_run_name",
    "recompute_granularity", "recompute_method", "recompute_num_layers", "attention_dropout", "hidden_dropout",
    "offload_train", "offload_rollout", "world_size", "data_parallel_size", "lr_warmup_init",
)


def stub_cuda_queries(gpu: dict) -> None:
    """torch.cuda's device queries answer as the catalogued GPU would; every other torch.cuda call is untouched."""
    import torch

    props = SimpleNamespace(name=gpu["name"], total_memory=int(gpu["total_memory"]), major=gpu["capability"][0],
                            minor=gpu["capability"][1], multi_processor_count=132)
    torch.cuda.is_available = lambda: True
    torch.cuda.device_count = lambda: int(gpu["count"])
    torch.cuda.get_device_properties = lambda device=None: props
    torch.cuda.get_device_capability = lambda device=None: tuple(gpu["capability"])
    torch.cuda.current_device = lambda: 0


def sample_json(s) -> dict:
    return {"prompt": s.prompt, "label": s.label, "metadata": s.metadata}


def error_json(stage: str, exc: BaseException) -> dict:
    frames = traceback.extract_tb(exc.__traceback__)
    where = frames[-1].filename if frames else ""
    return {"ok": False, "stage": stage, "error": {"type": type(exc).__name__, "module": type(exc).__module__,
                                                   "message": str(exc)[:2000], "raised_in": where}}


def load_datasets(args) -> dict[str, list]:
    from miles.rollout.data_source import RolloutDataSource
    from miles.utils.data import Dataset
    from miles.utils.processing_utils import load_processor, load_tokenizer

    out = {"train": RolloutDataSource(args).dataset.origin_samples}  # file order (the shuffle permutes .samples)
    tokenizer = load_tokenizer(args.hf_checkpoint, chat_template_path=args.chat_template_path, trust_remote_code=True)
    processor = load_processor(args.hf_checkpoint, trust_remote_code=True)
    for cfg in args.eval_datasets or []:
        out[cfg.name] = Dataset(path=cfg.path, tokenizer=tokenizer, processor=processor,
                                max_length=args.eval_max_prompt_len, prompt_key=cfg.input_key,
                                label_key=cfg.label_key, multimodal_keys=args.multimodal_keys,
                                metadata_key=cfg.metadata_key, tool_key=cfg.tool_key,
                                apply_chat_template=args.apply_chat_template,
                                apply_chat_template_kwargs=args.apply_chat_template_kwargs).origin_samples
    return out


def score(args, datasets: dict[str, list], wanted: list[dict]) -> list:
    import copy

    from miles.rollout.rm_hub import batched_async_rm

    samples = []
    for w in wanted:
        s = copy.deepcopy(datasets[w["dataset"]][w["index"]])
        s.response = w["response"]
        samples.append(s)
    asyncio.run(batched_async_rm(args, samples, inplace_set_reward_field=True))
    eval_key = args.eval_reward_key or args.reward_key
    out = []
    for w, s in zip(wanted, samples, strict=True):
        if w["dataset"] == "train":
            value = s.get_reward_value(args)
        else:
            value = s.reward if not eval_key else s.reward[eval_key]
        out.append({"value": value, "reply": s.reward})
    return out


def run_case(case: dict) -> dict:
    stub_cuda_queries(case["gpu"])
    os.environ.update(case.get("env") or {})
    sys.argv = ["train.py", *case["argv"]]
    try:
        from miles.utils.arguments import parse_args

        args = parse_args()
    except BaseException as exc:  # noqa: BLE001 -- argparse exits with SystemExit; every failure is reported
        return error_json("parse", exc)
    finally:
        for key in case.get("env") or {}:
            os.environ.pop(key, None)
    if case.get("rm_host") and args.rm_url:
        args.rm_url = args.rm_url.replace(case["rm_host"]["from"], case["rm_host"]["to"], 1)
    parsed = {k: getattr(args, k, None) for k in ARG_FIELDS}
    parsed["eval_datasets"] = [{"name": c.name, "path": c.path, "input_key": c.input_key, "label_key": c.label_key,
                                "metadata_key": c.metadata_key} for c in args.eval_datasets or []]
    try:
        datasets = load_datasets(args)
    except BaseException as exc:  # noqa: BLE001
        return {**error_json("data", exc), "args": parsed}
    result = {"ok": True, "args": parsed, "datasets": {k: [sample_json(s) for s in v] for k, v in datasets.items()}}
    try:
        result["rewards"] = score(args, datasets, case.get("score") or [])
    except BaseException as exc:  # noqa: BLE001
        result = {**error_json("reward", exc), "args": parsed, "datasets": result["datasets"]}
    if case.get("metrics") and result.get("ok"):
        try:
            result["metrics_pages"] = track_steps(args, case["metrics"]["rollouts"])
        except BaseException as exc:  # noqa: BLE001
            result = {**error_json("metrics", exc), "args": parsed}
    return result


def track_steps(args, rollouts: int) -> list[str]:
    """miles' tracking with its Prometheus backend, fed as its training loop feeds it; the collector's page after
    each rollout (once it shows that rollout, and reads the same twice: a page read while the collector sets a
    rollout's gauges mixes two rollouts)."""
    import time
    import urllib.request

    import ray
    from miles.backends.training_utils.log_utils import log_train_step
    from miles.utils import tracking_utils
    from miles.utils.timer import timer
    from miles.utils.train_metric_utils import log_perf_data_raw

    # Ray 2.60's ray.init() turns token authentication on for a new local cluster and writes ~/.ray/auth_token,
    # which every later `ray start` on the machine then picks up: this local collector needs no authentication.
    os.environ["RAY_AUTH_MODE"] = "disabled"
    ray.init(num_cpus=1, num_gpus=0, include_dashboard=False, log_to_driver=False)
    try:
        tracking_utils.init_tracking(args, primary=True)
        pages = []
        for rollout_id in range(rollouts):
            with timer("train_wait"):
                time.sleep(0.2)
            with timer("train"):
                with timer("log_probs"):
                    time.sleep(0.1)
                with timer("actor_train"):
                    time.sleep(0.3)
            log_train_step(args, {"loss": 0.5 / (rollout_id + 1), "pg_loss": 0.1}, 1.5, rollout_id, 0, 1,
                           should_log=True)
            log_perf_data_raw(rollout_id, args, True, None)
            url = f"http://127.0.0.1:{args.prometheus_port}/metrics"
            deadline = time.monotonic() + 60
            page, numbers = None, None
            while True:  # the collector's update is a Ray call: wait until its page shows this rollout, whole
                previous = numbers
                with urllib.request.urlopen(url, timeout=5) as response:
                    page = response.read().decode()
                numbers = [line for line in page.splitlines() if line.startswith("miles_metric_")]  # not its CPU time
                if numbers == previous and any(
                        line.startswith("miles_metric_rollout_step{") and float(line.split()[-1]) == rollout_id
                        for line in page.splitlines()):
                    break
                if time.monotonic() > deadline:
                    raise TimeoutError(f"the collector never showed rollout {rollout_id}:\n{page[-2000:]}")
                time.sleep(0.2)
            pages.append(page)
        return pages
    finally:
        tracking_utils.finish_tracking()
        ray.shutdown()


def main() -> int:
    request = json.loads(sys.stdin.read())
    results = [run_case(case) for case in request["cases"]]
    print(json.dumps({"results": results}, default=str))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    raise SystemExit(main())
