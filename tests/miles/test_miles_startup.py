"""The built miles command read by miles itself: `miles.utils.arguments.parse_args()` (miles' and its Megatron
fork's parsers and validation, SGLang's argument check, hf_validate_args against the model's config.json) on the
exact argv the Ray job runs, and grpo-data's miles output loaded through miles' own data source with the keys it
parsed.

Where it stops: after argument validation and data loading, before train.py creates Ray placement groups (the
first step that needs GPUs). The one stub is torch.cuda's device queries (is_available, device_count,
get_device_properties, get_device_capability, current_device), answering as the values' GPU (an H200) for the
validation code that asks them (tests/miles/miles_worker.py). Model flags: MODEL_ARGS of the model script the
builder names (job/miles.py MODEL_SCRIPTS), recorded from radixark/miles at the pinned commit in
tests/miles/model_scripts.json because the wheel carries no scripts/. No CPU run goes further: the training actor
calls torch.cuda.set_device at init (miles/ray/train_actor.py:66) and Megatron's get_model moves the model with
.cuda() (megatron/training/training.py:1259); verl's real GRPO steps on a CPU are the loop tier's (docs/loop.md).
"""

from __future__ import annotations

import pytest
from grpo_stack.data.example import MILES_LABEL_KEYS

from .cases import VARIANTS, rows

pytestmark = pytest.mark.miles


def _ok(miles_runs, name):
    case, result, _, _ = miles_runs[name]
    assert result["stage"] != "parse" if not result["ok"] else True, f"{name}: miles refused the argv: {result}"
    return case, result


@pytest.mark.parametrize("name", list(VARIANTS))
def test_miles_parses_and_validates_the_emitted_argv(miles_runs, name):
    """miles' own parse_args accepts the whole command, and the namespace holds what the values say."""
    case, result = _ok(miles_runs, name)
    a = result["args"]
    job, m, cluster = case.job, case.job["miles"], case.values["global"]["cluster"]
    p, r = job["parallel"], job["rollout"]
    assert a["hf_checkpoint"] == str(case.on_storage(job["model"]["path"]))
    assert a["save"] == str(case.on_storage(job["trainer"]["checkpointDir"]))
    assert a["tensor_model_parallel_size"] == p["tensor"]
    assert a["pipeline_model_parallel_size"] == p["pipeline"]
    assert a["context_parallel_size"] == p["context"]
    assert a["expert_model_parallel_size"] == p["expert"]
    assert a["sequence_parallel"] is bool(p["sequenceParallel"])
    assert a["rollout_num_gpus_per_engine"] == r["tensorParallel"]
    assert a["n_samples_per_prompt"] == r["samplesPerPrompt"]
    assert a["rollout_temperature"] == r["temperature"]
    assert a["sglang_mem_fraction_static"] == r["gpuMemoryUtilization"]
    assert a["rollout_max_prompt_len"] == job["lengths"]["maxPrompt"]
    assert a["rollout_max_response_len"] == job["lengths"]["maxResponse"]
    assert (a["rollout_batch_size"], a["global_batch_size"], a["micro_batch_size"]) == \
        (m["rolloutBatchSize"], m["globalBatchSize"], m["microBatchSize"])
    assert a["num_rollout"] == m["numRollout"]
    assert a["save_interval"] == job["trainer"]["saveFreq"] and a["eval_interval"] == job["trainer"]["testFreq"]
    assert a["use_dynamic_batch_size"] is bool(m["useDynamicBatchSize"])
    if m["useDynamicBatchSize"]:
        assert a["max_tokens_per_gpu"] == a["log_probs_max_tokens_per_gpu"] == m["maxTokensPerGpu"]
    world = int(cluster["nodes"]) * int(cluster["gpusPerNode"])
    actor_nodes = int(cluster["nodes"]) if m["colocate"] else int(m["actorNodes"])
    assert a["colocate"] is bool(m["colocate"])
    assert a["actor_num_nodes"] == actor_nodes and a["world_size"] == actor_nodes * int(cluster["gpusPerNode"])
    # miles' own derivation of the rollout GPUs: the actor's when colocated, the remaining nodes' otherwise.
    assert a["rollout_num_gpus"] == (a["world_size"] if m["colocate"] else world - a["world_size"])
    assert a["offload_train"] is bool(m["colocate"]) and a["offload_rollout"] is bool(m["colocate"])
    assert a["data_parallel_size"] == a["world_size"] // (p["tensor"] * p["pipeline"] * p["context"])
    assert a["kl_loss_type"] == job["kl"]["estimator"] and a["use_kl_loss"] is True
    tensorboard = "tensorboard" in job["trainer"]["logger"]
    assert a["use_tensorboard"] is tensorboard
    assert a["tb_experiment_name"] == (job["trainer"]["experiment"] if tensorboard else None)


@pytest.mark.parametrize("name", list(VARIANTS))
def test_reward_dispatch_flags_are_what_the_reward_kind_needs(miles_runs, name):
    """--rm-type selects async_rm's branch: remote_rm for an endpoint, miles' own scorer for builtin; the label
    key is the miles layout's key for that dispatch, and miles falls back to --reward-key for evaluation."""
    case, result = _ok(miles_runs, name)
    a = result["args"]
    if case.kind == "builtin":
        assert a["rm_type"] == "deepscaler" and a["rm_url"] is None
        assert a["label_key"] == MILES_LABEL_KEYS["builtin"] and a["reward_key"] is None
    else:
        assert a["rm_type"] == "remote_rm" and a["rm_url"].startswith("http://127.0.0.1:")
        assert case.flag("--rm-url").endswith("/score")
        assert a["label_key"] == MILES_LABEL_KEYS["service"]
        assert a["reward_key"] == a["eval_reward_key"] == "reward"
    assert a["custom_rm_path"] is None
    assert a["metadata_key"] == "metadata" and a["input_key"] == "prompt"


def test_resume_modes_reach_miles_as_the_values_say(miles_runs):
    """disable: miles starts from the converted checkpoint (--ref-load) as a fine-tune; auto: the checkpoint dir,
    falling back to --ref-load while it holds no tracker; fromPath: that checkpoint, optimizer state included."""
    shipped, auto, from_path = (miles_runs[n][:2] for n in ("miles-qwen3-4b", "4b-resume-auto", "4b-resume-from-path"))
    for case, result in (shipped, auto):
        a = result["args"]
        assert a["load"] == a["ref_load"] == case.built.prepare[0].output
        assert a["finetune"] is True and a["no_load_optim"] is True and a["start_rollout_id"] == 0
    assert auto[0].flag("--load") == str(auto[0].on_storage(auto[0].job["trainer"]["checkpointDir"]))
    case, result = from_path
    assert result["args"]["load"] == str(case.on_storage("checkpoints/earlier-run"))
    assert result["args"]["finetune"] is False and not result["args"]["no_load_optim"]  # miles leaves it unset


def test_extra_args_reach_the_namespace(miles_runs):
    case, result = _ok(miles_runs, "4b-extra-args")
    assert result["args"]["lr_warmup_init"] == 1e-7


@pytest.mark.parametrize("name", list(VARIANTS))
def test_grpo_data_output_loads_through_miles_data_source(miles_runs, name):
    """RolloutDataSource (training) and Dataset with the eval keys miles resolved (evaluation) read every row
    grpo-data wrote: the prompt through the tokenizer's chat template, the label the dispatch reads, metadata."""
    case, result = _ok(miles_runs, name)
    assert result["ok"] or result["stage"] == "reward", result
    files = {"train": case.on_storage(case.job["data"]["trainFiles"][0]),
             "eval": case.on_storage(case.job["data"]["valFiles"][0])}
    assert [d["name"] for d in result["args"]["eval_datasets"]] == ["eval"]
    for dataset, path in files.items():
        written, loaded = rows(path), result["datasets"][dataset]
        assert len(loaded) == len(written) > 0
        for row, sample in zip(written, loaded, strict=True):
            user = row["prompt"][0]["content"]
            assert sample["prompt"].startswith("<|im_start|>user\n" + user)
            assert sample["prompt"].endswith("<|im_start|>assistant\n")
            assert sample["metadata"]["data_source"] == row["metadata"]["data_source"]
            # Both miles builds dispatch on --rm-type only while rows name no reward type (images/README.md).
            assert "rm_type" not in sample["metadata"] and "reward_spec" not in row
            if case.kind == "builtin":
                assert sample["label"] == row["label"]
            else:
                assert sample["label"] == {"data_source": row["metadata"]["data_source"], "ground_truth": row["label"]}
