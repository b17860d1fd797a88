"""A published row (rows.json) -> the memory model's Run, through the product's own readers of verl's Hydra keys
and miles' arguments (memory/resolve.py verl_run, miles_run), or the reason it cannot be expressed.

Only what a row states is passed; what it leaves out takes the framework's defaults, as a manifest would. A row is
not expressed when a fact the model needs is missing or outside its inputs: an architecture with no cited
config.json (architectures.json), a GPU whose memory is not stated, a framework the model does not read."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from grpo_stack.catalog.instances import GPU_MEMORY_MIB
from grpo_stack.catalog.models import MODELS
from grpo_stack.memory import Run
from grpo_stack.memory.arch import Arch, from_config, from_megatron_args, from_shape
from grpo_stack.memory.resolve import AR, FS, MG, megatron_precision, miles_run, verl_run, with_lengths

MIB = 2**20
ARCHITECTURES = Path(__file__).with_name("architectures.json")
# The advantage estimator each verl row's source runs (gae trains a critic), beside the rows (estimators.json).
ESTIMATORS = {i: e["adv_estimator"] for i, e in json.loads(
    Path(__file__).with_name("estimators.json").read_text(encoding="utf-8"))["rows"].items() if e["adv_estimator"]}
# A row's GPU -> MiB per GPU, from the instance catalogue's figure for the same part (EC2 GpuInfo): H100 and H800 (the
# same 80 GB HBM3 board), A100/A800 80 GB as p4de, A100 40 GB as p4d, H200 as p5en. Others (GB200, an unnamed
# Blackwell, H100 96 GB, RTX A6000, a GPU of unstated memory) are not in the catalogue: those rows are not expressed,
# but for the stated types below.
GPUS = {"H100": "p5", "H100-80GB": "p5", "H800": "p5", "A100-80GB": "p4de", "A800-80GB": "p4de", "A100-40GB": "p4d",
        "80GB GPU (model not stated)": "p4de", "H200": "p5en", "H200 (141GB)": "p5en", "H200-141GB": "p5en"}
# A GPU the catalogue lacks, with the memory a user of it states (global.instanceTypes.<type>.gpuMemory, what
# nvidia-smi reports as memory.total): the H20, 97871 MiB (NVIDIA/nvtrust issue #128, comment of 2026-01-05,
# "NVIDIA H20 ... 0MiB / 97871MiB").
STATED_GPU_MIB = {"H20": 97871, "H20-96GB": 97871}


# A Megatron-LM functional test's tokenizer -> its vocabulary: the GPT-2 BPE vocab file the GPT tests load
# (openai-community/gpt2 config.json "vocab_size": 50257). Other tokenizers' sizes are not stated by the rows.
TOKENIZER_VOCAB = {"GPT2 BPE vocab-file": 50257}
# Megatron arguments whose memory the model has no input for: a row that sets one is not expressed.
MEGATRON_OUTSIDE = {
    "attention-backend": ("unfused", "attention without a fused kernel keeps each head's score matrix"),
    "transformer-impl": ("local", "Megatron's local attention keeps each head's score matrix"),
    "fine-grained-activation-offloading": (True, "activations offloaded to host memory"),
    "use-megatron-fsdp": (True, "Megatron FSDP's sharding"),
    "cuda-graph-impl": (None, "CUDA graphs in training"),
    "mtp-num-layers": (None, "multi-token prediction layers"),
    "hybrid-override-pattern": (None, "Mamba layers"),
}


class NotExpressed(Exception):
    """The row needs a fact or an input the model does not have; the message says which."""


def architectures() -> dict[str, Arch]:
    out = {shape.hf_id.lower(): from_shape(shape) for shape in MODELS.values() if shape.vocab_size}
    for hf_id, entry in json.loads(ARCHITECTURES.read_text(encoding="utf-8"))["models"].items():
        out.setdefault(hf_id.lower(), from_config(entry["config"]))
    return out


# Suffixes that name a variant of one architecture (a base model and its instruct or chat model share it).
VARIANTS = ("-instruct", "-base", "-chat", "-hf")


def _family(name: str) -> str:
    last = name.split("/")[-1]
    for suffix in VARIANTS:
        if last.endswith(suffix):
            return last[: -len(suffix)]
    return last


def arch_of(model: Any, known: dict[str, Arch]) -> Arch:
    """The row's model: its Hugging Face id, or another variant of it (base, instruct, chat) that a cited config
    carries; never a model that only starts with its name (DeepSeek-R1 is not DeepSeek-R1-Distill-Qwen-1.5B)."""
    if not isinstance(model, str):
        raise NotExpressed("the model is given as a Megatron shape, not a Hugging Face id")
    name = model.split(" (")[0].strip().lower()
    if "-vl-" in name or name.endswith("-vl"):
        raise NotExpressed(f"{model!r} is a vision-language model: its vision tower and image tokens are not inputs")
    if name in known:
        return known[name]
    matches = sorted(k for k in known if _family(k) == _family(name))
    if not matches:
        raise NotExpressed(f"no cited config.json for {model!r}")
    return known[matches[0]]


def gpu_bytes(row: dict[str, Any]) -> int:
    family = GPUS.get(str(row.get("gpu")))
    if family is None and str(row.get("gpu")) in STATED_GPU_MIB:
        return STATED_GPU_MIB[str(row["gpu"])] * MIB
    if family is None:
        raise NotExpressed(f"GPU {row.get('gpu')!r}: its memory is not in the instance catalogue")
    return GPU_MEMORY_MIB[family] * MIB


def run_of(row: dict[str, Any], known: dict[str, Arch], stated_means: bool = True) -> Run:
    """The row's Run; with `stated_means`, at the mean prompt and response lengths its source states (a log's
    response_length/mean), as global.job.lengths states them, else every sample at its cap."""
    framework = row.get("framework")
    if framework == "verl":
        return _lengths(_verl(row, known), row, "max_prompt_length", "max_response_length", stated_means)
    if framework in ("miles", "slime"):
        return _lengths(_miles(row, known), row, "rollout_max_prompt_len", "rollout_max_response_len", stated_means)
    if row.get("source_kind") == "megatron-lm-golden":
        return _megatron(row)
    raise NotExpressed(f"{framework or row.get('source_kind')}: the model reads verl's and miles' commands only")


def _lengths(run: Run, row: dict[str, Any], max_prompt: str, max_response: str, stated_means: bool) -> Run:
    """Stated means apply where the row states both caps too (global.job.lengths needs them)."""
    means = {"meanPrompt": row.get("mean_prompt_length"), "meanResponse": row.get("mean_response_length")}
    if not stated_means or not any(means.values()) or not (row.get(max_prompt) and row.get(max_response)):
        return run
    lengths = {"maxPrompt": row[max_prompt], "maxResponse": row[max_response]}
    return with_lengths(run, {**lengths, **{k: v for k, v in means.items() if v is not None}})


def _put(out: dict, key: str, value: Any) -> None:
    if value is not None:
        out[key] = value


def _verl(row: dict[str, Any], known: dict[str, Arch]) -> Run:
    if row.get("backend") not in ("fsdp", "megatron"):
        raise NotExpressed(f"verl backend {row.get('backend')!r} not stated")
    megatron = row["backend"] == "megatron"
    flags = row.get("other_flags") or {}
    nodes, gpus = row.get("nodes") or 1, row.get("gpus_per_node") or 8
    v: dict[str, Any] = {"trainer.nnodes": nodes, "trainer.n_gpus_per_node": gpus}
    _put(v, "data.max_prompt_length", row.get("max_prompt_length"))
    _put(v, "data.max_response_length", row.get("max_response_length"))
    _put(v, "data.train_batch_size", row.get("train_batch_size"))
    _put(v, f"{AR}.rollout.n", row.get("rollout_n"))
    _put(v, f"{AR}.actor.ppo_mini_batch_size", row.get("ppo_mini_batch_size"))
    world = nodes * gpus // (row.get("ulysses_sp") or 1)
    micro = row.get("ppo_micro_batch_size_per_gpu")
    if micro is None:  # verl divides the deprecated global micro batch by the data-parallel size
        total = flags.get("ppo_micro_batch_size(global,deprecated)") or flags.get("ppo_micro_batch_size(global)")
        micro = max(1, int(total) // world) if total else None
    _put(v, f"{AR}.actor.ppo_micro_batch_size_per_gpu", micro)
    lp = row.get("log_prob_micro_batch_size_per_gpu")
    if lp is None:
        total = (flags.get("rollout.log_prob_micro_batch_size(global,deprecated)")
                 or flags.get("log_prob_micro_batch_size(global)"))
        lp = max(1, int(total) // world) if total else None
    _put(v, f"{AR}.rollout.log_prob_micro_batch_size_per_gpu", lp)
    _put(v, f"{AR}.actor.use_dynamic_bsz", row.get("use_dynamic_bsz"))
    _put(v, f"{AR}.actor.ppo_max_token_len_per_gpu", row.get("ppo_max_token_len_per_gpu"))
    _put(v, f"{AR}.rollout.log_prob_max_token_len_per_gpu", flags.get("rollout.log_prob_max_token_len_per_gpu")
         or flags.get("log_prob_max_token_len_per_gpu"))
    _put(v, f"{AR}.actor.ulysses_sequence_parallel_size", row.get("ulysses_sp"))
    engine = MG if megatron else FS
    _put(v, engine + "param_offload", row.get("param_offload"))
    _put(v, engine + "optimizer_offload", row.get("optimizer_offload"))
    _put(v, engine + "grad_offload", flags.get("actor.megatron.grad_offload"))
    _put(v, f"{AR}.ref.{'megatron' if megatron else 'fsdp_config'}.param_offload", row.get("ref_param_offload"))
    _put(v, f"{AR}.model.enable_gradient_checkpointing", row.get("gradient_checkpointing"))
    _put(v, f"{AR}.model.use_remove_padding", row.get("remove_padding"))
    _put(v, f"{AR}.actor.entropy_coeff", row.get("entropy_coeff"))
    _put(v, f"{AR}.actor.use_kl_loss", flags.get("use_kl_loss"))
    _put(v, "algorithm.adv_estimator", ESTIMATORS.get(row["id"]))
    for key, value in flags.items():  # the verl keys a row states beyond its fields, as the source spells them
        full = _verl_key(key)
        if full and value is not None and not isinstance(value, dict | list):
            v.setdefault(full, value)
    v.update({k: val for k, val in flags.items() if k.startswith("critic.")
              and (not isinstance(val, str) or k == "critic.model.path")})
    if "critic.model.path" in v:  # the actor's model path as the row states it, for the critic's comparison
        v[f"{AR}.model.path"] = row["model"]
    _put(v, f"{AR}.model.{'lora.rank' if megatron else 'lora_rank'}", row.get("lora_rank"))
    _put(v, f"{AR}.rollout.tensor_model_parallel_size", row.get("rollout_tp"))
    _put(v, f"{AR}.rollout.gpu_memory_utilization", row.get("gpu_memory_utilization"))
    _put(v, f"{AR}.rollout.max_num_seqs", row.get("max_num_seqs"))
    _put(v, f"{AR}.rollout.max_num_batched_tokens", row.get("max_num_batched_tokens"))
    _put(v, f"{AR}.rollout.max_model_len", flags.get("rollout.max_model_len"))
    if megatron:
        for field, key in (("tp", "tensor_model_parallel_size"), ("pp", "pipeline_model_parallel_size"),
                           ("cp", "context_parallel_size"), ("ep", "expert_model_parallel_size"),
                           ("etp", "expert_tensor_parallel_size"), ("vpp", "virtual_pipeline_model_parallel_size")):
            if isinstance(row.get(field), int):
                v[MG + key] = row[field]
        recompute = row.get("recompute")
        if isinstance(recompute, str):
            v[MG + "override_transformer_config.recompute_granularity"] = recompute.split("/")[0]
    run = verl_run(arch_of(row["model"], known), v, megatron, gpu_bytes(row), None)
    if row.get("rollout_engine") == "sglang":
        run = replace(run, rollout="sglang")
    return run


# A row's other_flags key that is a verl Hydra path, short or whole -> its whole path (the rows' fields win).
VERL_PREFIXES = {"actor.": f"{AR}.actor.", "rollout.": f"{AR}.rollout.", "ref.": f"{AR}.ref.",
                 "model.": f"{AR}.model.", "override_transformer_config.": MG + "override_transformer_config.",
                 f"{AR}.": f"{AR}.", "algorithm.": "algorithm.", "data.": "data.", "trainer.": "trainer."}


def _verl_key(key: str) -> str | None:
    if "(" in key or " " in key:  # a note on a key (`ppo_micro_batch_size(global,deprecated)`), not the key
        return None
    return next((full + key[len(short):] for short, full in VERL_PREFIXES.items() if key.startswith(short)), None)


def _miles(row: dict[str, Any], known: dict[str, Arch]) -> Run:
    # the miles arguments a row's other_flags state as the command spells them (--rollout-max-context-len), under
    # the row's own fields, which win
    v: dict[str, Any] = {k[2:]: val for k, val in (row.get("other_flags") or {}).items()
                         if k.startswith("--") and val is not None and val is not False}
    if row.get("optimizer_cpu_offload"):
        v["optimizer-cpu-offload"] = True
        if isinstance(row.get("offload_fraction"), int | float):
            v["optimizer-offload-fraction"] = row["offload_fraction"]
    for field, key in (("tp", "tensor-model-parallel-size"), ("pp", "pipeline-model-parallel-size"),
                       ("cp", "context-parallel-size"), ("ep", "expert-model-parallel-size"),
                       ("etp", "expert-tensor-parallel-size"), ("micro_batch_size", "micro-batch-size"),
                       ("global_batch_size", "global-batch-size"), ("max_tokens_per_gpu", "max-tokens-per-gpu"),
                       ("rollout_max_prompt_len", "rollout-max-prompt-len"),
                       ("rollout_max_response_len", "rollout-max-response-len"),
                       ("actor_num_nodes", "actor-num-nodes"), ("actor_num_gpus_per_node", "actor-num-gpus-per-node"),
                       ("rollout_num_gpus_per_engine", "rollout-num-gpus-per-engine"),
                       ("sglang_mem_fraction_static", "sglang-mem-fraction-static"),
                       ("rollout_batch_size", "rollout-batch-size"), ("n_samples_per_prompt", "n-samples-per-prompt")):
        if isinstance(row.get(field), int | float) and not isinstance(row.get(field), bool):
            v[key] = row[field]
    for field, key in (("use_dynamic_batch_size", "use-dynamic-batch-size"), ("colocate", "colocate"),
                       ("sequence_parallel", "sequence-parallel"),
                       ("use_distributed_optimizer", "use-distributed-optimizer")):
        if row.get(field):
            v[key] = True
    if (row.get("other_flags") or {}).get("use_kl_loss"):
        v["use-kl-loss"] = True
    recompute = row.get("recompute")
    if isinstance(recompute, str):
        v["recompute-granularity"] = recompute.split("/")[0]
    return miles_run(arch_of(row["model"], known), v, row.get("nodes") or 1, gpu_bytes(row), None)


def _megatron(row: dict[str, Any]) -> Run:
    """A Megatron-LM functional test's golden values: its model_config.yaml arguments (other_flags), the row's
    parallel layout and batch, the GPT-2 vocabulary its tokenizer names, pre-training (no rollout, Megatron's own
    output layer). Megatron's argument defaults fill the rest (arch.from_megatron_args)."""
    world = row.get("gpus_total")
    if not isinstance(world, int):
        raise NotExpressed("the world size is not stated")
    v = {k[2:]: val for k, val in (row.get("other_flags") or {}).items() if k.startswith("--")}
    for key, (value, what) in MEGATRON_OUTSIDE.items():
        if key in v and (value is None or v[key] == value):
            raise NotExpressed(f"--{key}: {what} (not an input)")
    tokenizer = (row.get("model") or {}).get("tokenizer")
    if "vocab-size" not in v:
        if tokenizer not in TOKENIZER_VOCAB:
            raise NotExpressed(f"the vocabulary of tokenizer {tokenizer!r} is not stated")
        v["vocab-size"] = TOKENIZER_VOCAB[tokenizer]
    for field, key in (("tp", "tensor-model-parallel-size"), ("pp", "pipeline-model-parallel-size"),
                       ("cp", "context-parallel-size"), ("ep", "expert-model-parallel-size"),
                       ("etp", "expert-tensor-parallel-size")):
        if isinstance(row.get(field), int):
            v.setdefault(key, row[field])
    arch = from_megatron_args(v)
    if arch is None:
        raise NotExpressed("the model arguments are incomplete")
    tp, pp, cp = (int(v.get(k, 1)) for k in ("tensor-model-parallel-size", "pipeline-model-parallel-size",
                                             "context-parallel-size"))
    if world % (tp * pp * cp):
        raise NotExpressed(f"tensor x pipeline x context parallel {tp * pp * cp} does not divide {world} GPUs")
    micro, dp = row.get("micro_batch_size") or 1, world // (tp * pp * cp)
    fp8 = bool(v.get("fp8-format"))
    return Run(arch, "megatron", "megatron", gpu_bytes(row), 1, world, tp=tp, pp=pp, cp=cp,
               ep=int(v.get("expert-model-parallel-size", 1)), etp=v.get("expert-tensor-parallel-size"),
               vpp=v.get("num-virtual-stages-per-pipeline-rank"),
               sequence_parallel=v.get("sequence-parallel") is True and tp > 1,
               distributed_optimizer=bool(row.get("use_distributed_optimizer")), **megatron_precision(v),
               fp8_training=fp8, fp8_params=fp8 and v.get("fp8-param-gather") is True,
               recompute=str(v.get("recompute-granularity") or "none"), seq_len=row["seq_length"],
               micro_batch=micro, rl_logits=False,
               step_samples=max(1, (row.get("global_batch_size") or dp * micro) // dp))
