"""Drive radixark/miles' own code with one emitted argv. Runs in the miles venv (tests/miles/setup_miles_venv.sh).

stdin: {"cases": [{"argv": [the train.py argv after the script name], "env": {the job's runtime env},
                   "gpu": {"count", "name", "total_memory", "capability"},
                   "rm_host": {"from": "host:port", "to": "host:port"} | null,
                   "score": [{"dataset": "train" | <eval dataset name>, "index": row, "response": text}],
                   "metrics": {"rollouts": [[{"index": training row, "response": text}, ...], ...]} | absent},
           ...]}
stdout (last line): {"results": [{"ok": true, "args": {...}, "datasets": {name: [sample, ...]}, "rewards": [...],
                                  with "metrics": "metrics_pages": [page per rollout],
                                  "rollouts_fed": [{"raw_reward", "response_lengths", "total_lengths"} per rollout]}
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
   actor on the parsed `--prometheus-port`), torch.distributed on gloo with one process and miles' Megatron backend's
   set-up of Megatron's process groups and its ParallelState from them, every parallel size 1
   (`_initialize_distributed`, `create_megatron_parallel_state`). Then per rollout what miles' training loop does:
   the rollout's samples (the given responses to training rows, tokenized with the prompt as miles' SGLang rollout
   leaves them, scored by `batched_async_rm`) become training data through miles' RolloutManager's own conversion and
   split (`_convert_samples_to_train_data`, `_split_train_data_by_dp`, through Ray's object store; on a manager made
   without its constructor, which starts SGLang servers) and the actor's `get_rollout_data`; under its timers
   (`miles.utils.timer.timer`) `log_rollout_data` (the mean reward and response length, gathered over the
   data-parallel group), `log_train_step` and `log_perf_data`. The collector's /metrics page is read after each
   rollout. Where it stops: the timers time sleeps and the losses are made up (miles cannot train on a CPU), no
   SGLang engine generates the responses (each response token gets log-probability -0.5), one process stands for the
   job's ranks, and Megatron is set up no further than its process groups (no model, optimizer or the rest of miles'
   `megatron_utils.initialize.init`).

The one stub: torch.cuda's device queries (is_available, device_count, get_device_properties,
get_device_capability, current_device) report the catalogued GPU, for the validation code that asks them; while
`get_rollout_data` runs, current_device answers "cpu", so the tensors it puts "on the GPU" stay on the CPU. No
CUDA call is made; nothing here allocates on a device. `rm_host` rewrites only host:port of the parsed --rm-url
(the release Service's DNS name -> the loopback server); the scheme and path miles posts to stay as emitted.
"""

from __future__ import annotations

import asyncio
import contextlib
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
            tracked = track_steps(args, datasets, case["metrics"]["rollouts"])
            result["metrics_pages"], result["rollouts_fed"] = tracked["pages"], tracked["fed"]
        except BaseException as exc:  # noqa: BLE001
            result = {**error_json("metrics", exc), "args": parsed}
    return result


def track_steps(args, datasets: dict[str, list], batches: list[list[dict]]) -> dict:
    """miles' tracking with its Prometheus backend, fed as its training loop feeds it, one rollout per batch: the
    collector's page after each rollout (once it shows that rollout, whole, and reads the same twice: a page read
    while the collector sets a rollout's gauges mixes two rollouts), and what each rollout's training data held."""
    import time

    import ray
    from miles.backends.training_utils.data import get_rollout_data
    from miles.backends.training_utils.log_utils import log_perf_data, log_rollout_data, log_train_step
    from miles.utils import tracking_utils
    from miles.utils.timer import Timer, timer

    # Ray 2.60's ray.init() turns token authentication on for a new local cluster and writes ~/.ray/auth_token,
    # which every later `ray start` on the machine then picks up: this local collector needs no authentication.
    os.environ["RAY_AUTH_MODE"] = "disabled"
    ray.init(num_cpus=1, num_gpus=0, include_dashboard=False, log_to_driver=False)
    try:
        tracking_utils.init_tracking(args, primary=True)
        pages, fed = [], []
        with one_process_group(args):
            rollout = Rollouts(args, datasets)
            for rollout_id, batch in enumerate(batches):
                with timer("train_wait"):  # the driver waits for the rollout: generated, scored, converted
                    refs, train_data = rollout.train_data(batch)
                    with timer("data_preprocess"):  # miles' actor.train: the data this rank trains on
                        rollout_data = rollout_data_on_cpu(get_rollout_data, args, refs)
                    time.sleep(0.2)
                with timer("train"):
                    with timer("log_probs"):
                        time.sleep(0.1)
                    log_rollout_data(rollout_id, args, rollout_data)  # where miles' train_actor calls it
                    with timer("actor_train"):
                        time.sleep(0.3)
                log_train_step(args, {"loss": 0.5 / (rollout_id + 1), "pg_loss": 0.1}, 1.5, rollout_id, 0, 1,
                               should_log=True)
                timings = {f"{PREFIX}perf_{name}_time": v for name, v in Timer().log_dict().items()}
                log_perf_data(rollout_id, args)  # logs those timings and resets the timer
                fed.append({k: train_data[k] for k in ("raw_reward", "response_lengths", "total_lengths")})
                pages.append(whole_page(args, rollout_id, timings))
        return {"pages": pages, "fed": fed}
    finally:
        tracking_utils.finish_tracking()
        ray.shutdown()


PREFIX = "miles_metric_"
ROLLOUT_GAUGES = (PREFIX + "rollout_raw_reward", PREFIX + "rollout_response_lengths")  # log_rollout_data's


def whole_page(args, rollout_id: int, timings: dict[str, float]) -> str:
    """The collector's page once it shows `rollout_id`, log_rollout_data's gauges and this rollout's own timings
    (log_perf_data, the rollout's last call), and reads the same twice."""
    import time
    import urllib.request

    url = f"http://127.0.0.1:{args.prometheus_port}/metrics"
    deadline = time.monotonic() + 60
    numbers = None
    while True:  # the collector's updates are Ray calls: wait until its page shows this rollout, whole
        previous = numbers
        with urllib.request.urlopen(url, timeout=5) as response:
            page = response.read().decode()
        numbers = [line for line in page.splitlines() if line.startswith(PREFIX)]  # not the collector's CPU time
        values = {line.split("{", 1)[0]: float(line.split()[-1]) for line in numbers}
        if (numbers == previous and values.get(PREFIX + "rollout_step") == rollout_id
                and set(ROLLOUT_GAUGES) <= set(values) and all(values.get(k) == v for k, v in timings.items())):
            return page
        if time.monotonic() > deadline:
            raise TimeoutError(f"the collector never showed rollout {rollout_id}:\n{page[-2000:]}")
        time.sleep(0.2)


@contextlib.contextmanager
def one_process_group(args):
    """torch.distributed on gloo with one process (rank 0 of 1, a FileStore in a temporary directory); miles'
    Megatron backend's own set-up of Megatron's process groups (`_initialize_distributed`) on the parsed args with
    every parallel size 1, and its `create_megatron_parallel_state()` from them, set as miles' ParallelState."""
    import copy
    import tempfile

    import torch.distributed as dist
    from megatron.core import mpu
    from megatron.training.global_vars import set_args, unset_global_variables
    from miles.backends.megatron_utils.initialize import _initialize_distributed
    from miles.backends.megatron_utils.parallel import create_megatron_parallel_state
    from miles.backends.training_utils.parallel import set_parallel_state

    one = copy.copy(args)
    one.tensor_model_parallel_size = one.pipeline_model_parallel_size = one.context_parallel_size = 1
    one.expert_model_parallel_size = one.expert_tensor_parallel_size = 1
    one.virtual_pipeline_model_parallel_size = None
    with tempfile.TemporaryDirectory() as tmp:
        dist.init_process_group("gloo", store=dist.FileStore(os.path.join(tmp, "store"), 1), rank=0, world_size=1)
        try:
            _initialize_distributed(one)
            set_args(one)  # Megatron's global args, which create_megatron_parallel_state reads (as miles' init sets)
            state = create_megatron_parallel_state()
            assert (state.tp.size, state.pp.size, state.cp.size, state.intra_dp.size) == (1, 1, 1, 1), state
            set_parallel_state(state)
            yield state
        finally:
            set_parallel_state(None)
            unset_global_variables()
            mpu.destroy_model_parallel()
            dist.destroy_process_group()


class Rollouts:
    """A rollout's samples as miles' SGLang rollout leaves them (`generate`: the prompt's token ids and the
    response's, its length, a log-probability per response token, here -0.5, the finish status; `generate_and_rm`:
    the reward from miles' reward entry), turned into training data by miles' RolloutManager's own methods."""

    def __init__(self, args, datasets: dict[str, list]):
        from miles.ray.rollout import RolloutManager
        from miles.utils.processing_utils import load_tokenizer

        self.args, self.train_rows = args, datasets["train"]
        self.tokenizer = load_tokenizer(args.hf_checkpoint, chat_template_path=args.chat_template_path,
                                        trust_remote_code=True)
        # The manager's conversion (_convert_samples_to_train_data: rewards after GRPO's group normalisation, raw
        # rewards, loss masks) and its split per data-parallel rank (_split_train_data_by_dp: into Ray's object
        # store), on an instance made without the actor's constructor, which starts SGLang servers.
        manager = object.__new__(RolloutManager.__ray_actor_class__)
        manager.args = args
        manager.custom_reward_post_process_func = manager.custom_convert_samples_to_train_data_func = None
        self.manager = manager
        self.index = self.group = 0

    def samples(self, batch: list[dict]) -> list:
        import copy

        from miles.rollout.rm_hub import batched_async_rm
        from miles.utils.types import Sample

        out = []
        for item in batch:
            s = copy.deepcopy(self.train_rows[item["index"]])
            s.group_index, s.index = self.group + item["index"], self.index
            self.index += 1
            prompt_ids = self.tokenizer.encode(s.prompt, add_special_tokens=False)
            response_ids = self.tokenizer.encode(item["response"], add_special_tokens=False)
            s.tokens, s.response, s.response_length = prompt_ids + response_ids, item["response"], len(response_ids)
            s.rollout_log_probs = [-0.5] * len(response_ids)
            s.status = Sample.Status.COMPLETED
            out.append(s)
        self.group += len(self.train_rows)
        rewards = asyncio.run(batched_async_rm(self.args, out))
        for s, reward in zip(out, rewards, strict=True):
            s.reward = reward
        return out

    def train_data(self, batch: list[dict]) -> tuple[list, dict]:
        data = self.manager._convert_samples_to_train_data(self.samples(batch))
        refs = self.manager._split_train_data_by_dp(data, 1)  # adds total_lengths to data
        return refs, data


def rollout_data_on_cpu(get_rollout_data, args, refs) -> dict:
    """miles' get_rollout_data (the rank's share from Ray's object store, its tensors made on
    `torch.cuda.current_device()`), with that query answering "cpu" for the call: the tensors stay on the CPU."""
    import torch

    device = torch.cuda.current_device
    torch.cuda.current_device = lambda: "cpu"
    try:
        return get_rollout_data(args, refs)
    finally:
        torch.cuda.current_device = device


def main() -> int:
    request = json.loads(sys.stdin.read())
    results = [run_case(case) for case in request["cases"]]
    print(json.dumps({"results": results}, default=str))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    raise SystemExit(main())
