"""What every batch rule shares: the numbers the builder emitted, turned into a batchmath shape, checked once.

Numbers come from `ctx.built` (the arguments the job will really run with) and verl's / miles' own defaults for
keys the builder leaves out; model dimensions come from the catalog entry `ctx.spec.model`. Key paths come
from each argument's `source`, so a finding points at the values key that produced the number.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from ....batchmath import ERROR, MilesShape, ModelDims, VerlShape, Violation, check_miles, check_verl
from ....batchmath.shapes import with_alternatives
from ...context import LintContext
from ...finding import Hit, Severity

AR = "actor_rollout_ref"
MG = f"{AR}.actor.megatron."
_UNSET = object()

# VerlShape field -> (verl key, verl 0.9.1 default when the builder does not emit the key).
VERL_KEYS: dict[str, tuple[str, object]] = {
    "nnodes": ("trainer.nnodes", 1),
    "gpus_per_node": ("trainer.n_gpus_per_node", 8),
    "train_batch_size": ("data.train_batch_size", 1024),
    "n": (f"{AR}.rollout.n", 1),
    "mini": (f"{AR}.actor.ppo_mini_batch_size", 256),
    "micro": (f"{AR}.actor.ppo_micro_batch_size_per_gpu", None),
    "log_prob_micro": (f"{AR}.rollout.log_prob_micro_batch_size_per_gpu", None),
    "ref_log_prob_micro": (f"{AR}.ref.log_prob_micro_batch_size_per_gpu", None),
    "dynamic": (f"{AR}.actor.use_dynamic_bsz", False),
    "log_prob_dynamic": (f"{AR}.rollout.log_prob_use_dynamic_bsz", _UNSET),  # = actor's
    "max_token_len": (f"{AR}.actor.ppo_max_token_len_per_gpu", 16384),
    "log_prob_max_token_len": (f"{AR}.rollout.log_prob_max_token_len_per_gpu", _UNSET),  # = actor's
    "max_prompt": ("data.max_prompt_length", 512),
    "max_response": ("data.max_response_length", 512),
    "tp": (MG + "tensor_model_parallel_size", 1),
    "pp": (MG + "pipeline_model_parallel_size", 1),
    "cp": (MG + "context_parallel_size", 1),
    "ep": (MG + "expert_model_parallel_size", 1),
    "etp": (MG + "expert_tensor_parallel_size", None),
    "vpp": (MG + "virtual_pipeline_model_parallel_size", None),
    "sequence_parallel": (MG + "sequence_parallel", True),
    "sp": (f"{AR}.actor.ulysses_sequence_parallel_size", 1),
    "use_remove_padding": (f"{AR}.model.use_remove_padding", True),
    "rollout_tp": (f"{AR}.rollout.tensor_model_parallel_size", 2),
    "rollout_dp": (f"{AR}.rollout.data_parallel_size", 1),
    "rollout_pp": (f"{AR}.rollout.pipeline_model_parallel_size", 1),
    "rollout_ep": (f"{AR}.rollout.expert_parallel_size", 1),
    "max_model_len": (f"{AR}.rollout.max_model_len", None),
    "chunked_prefill": (f"{AR}.rollout.enable_chunked_prefill", True),
    "val_do_sample": (f"{AR}.rollout.val_kwargs.do_sample", False),
    "temperature": (f"{AR}.rollout.temperature", 1.0),
    "use_v1": ("trainer.use_v1", _UNSET),  # 0.9.x: true; 0.8.0 has no v1 trainer
    "trainer_mode": ("trainer.v1.trainer_mode", "sync"),
    "parameter_sync_step": ("trainer.v1.separate_async.parameter_sync_step", 4),
    "gen_batch_size": ("data.gen_batch_size", None),
    "global_micro": (f"{AR}.actor.ppo_micro_batch_size", None),
}

# MilesShape field -> (miles flag, miles default when the builder does not emit it).
MILES_KEYS: dict[str, tuple[str, object]] = {
    "actor_nodes": ("actor-num-nodes", 1),
    "gpus_per_node": ("actor-num-gpus-per-node", 8),
    "colocate": ("colocate", False),
    "rollout_gpus": ("rollout-num-gpus", None),
    "rollout_tp": ("rollout-num-gpus-per-engine", 1),
    "rollout_batch": ("rollout-batch-size", None),
    "k": ("n-samples-per-prompt", 1),
    "global_batch": ("global-batch-size", None),
    "micro": ("micro-batch-size", 1),
    "steps": ("num-steps-per-rollout", None),
    "tp": ("tensor-model-parallel-size", 1),
    "pp": ("pipeline-model-parallel-size", 1),
    "cp": ("context-parallel-size", 1),
    "ep": ("expert-model-parallel-size", 1),
    "etp": ("expert-tensor-parallel-size", None),
    "vpp": ("num-virtual-stages-per-pipeline-rank", None),
    "sequence_parallel": ("sequence-parallel", False),
    "dynamic": ("use-dynamic-batch-size", False),
    "max_token_len": ("max-tokens-per-gpu", None),
    "max_prompt": ("rollout-max-prompt-len", 1024),
    "max_response": ("rollout-max-response-len", 1024),
    "seq_length": ("seq-length", 4096),
}

# Where a field lives in the values when no emitted argument names it (model facts, ignored settings).
FALLBACK_PATHS = {
    "nodes": "global.cluster.nodes",
    "nnodes": "global.cluster.nodes",
    "actor_nodes": "global.job.miles.actorNodes",
    "model": "global.job.model.preset",
    "sp": "global.job.parallel.ulysses",
    "etp": "global.job.parallel.expertTensor",
    "vpp": "global.job.parallel.virtualPipeline",
    "max_model_len": "global.job.rollout.maxModelLen",
    "max_token_len": "global.job.verl.batch.ppoMaxTokenLenPerGpu",
    "lora_rank": "global.job.lora.rank",
    "temperature": "global.job.rollout.temperature",
    "global_micro": "global.job.verl.batch.ppoMicroBatchSizePerGpu",
    "use_remove_padding": "global.job.parallel.ulysses",
    "cp": "global.job.parallel.context",
    "seq_length": "global.job.lengths.maxPrompt",
}
# Fields whose emitted argument names the wrong place to change (colocate emits the cluster's node count).
PREFERRED_PATHS = {"actor_nodes": "global.job.miles.actorNodes"}

# What happens when a formula fails, by the sheet's id prefix.
WHEN = {
    "V": "verl rejects this at startup (validate_config)",
    "R": "verl accepts it at submit and crashes on the GPU workers, minutes into the run",
    "M": "Megatron fails while building the model or its process groups",
    "S": "miles fails or misbehaves at runtime",
    "E": "the inference engine refuses to start",
}


@dataclass(frozen=True)
class Checked:
    framework: str
    shape: object
    violations: tuple[Violation, ...]
    paths: dict[str, str]  # shape field -> values key path


def _links(where: dict[str, str], inherited: dict[str, str]) -> dict[str, tuple[str, ...]]:
    """Fields that move together: fed by one values key, or inheriting another field through verl's defaults."""
    groups: dict[str, list[str]] = {}
    for field, path in where.items():
        groups.setdefault(path, []).append(field)
    links = {f: tuple(o for o in fields if o != f) for fields in groups.values() for f in fields if len(fields) > 1}
    for child, parent in inherited.items():
        links[parent] = (*links.get(parent, ()), child)
    return links


def _arg_values(ctx: LintContext) -> tuple[dict[str, object], dict[str, str]]:
    values, paths = {}, {}
    for a in ctx.built.args:
        values[a.key] = a.value
        if a.source.startswith("values: "):
            paths[a.key] = a.source.removeprefix("values: ").split(" ")[0]
    return values, paths


def _model(ctx: LintContext) -> ModelDims:
    m = ctx.spec.model
    return ModelDims(m.num_layers, m.num_attention_heads, m.num_key_value_heads, m.num_experts,
                     m.max_position_embeddings)


def _fields(keys: dict[str, tuple[str, object]], values: dict, paths: dict) -> tuple[dict, dict]:
    out, where = {}, {}
    for field, (key, default) in keys.items():
        out[field] = values.get(key, default)
        if key in paths:
            where[field] = paths[key]
    return out, where


def verl_shape(ctx: LintContext) -> tuple[VerlShape, dict[str, str], dict[str, str]]:
    """The shape, the values key path of each emitted field, and the fields that inherit another's value."""
    values, paths = _arg_values(ctx)
    f, where = _fields(VERL_KEYS, values, paths)
    version = ctx.spec.image.version  # the image the values select carries it
    inherited = {}
    for child, parent in (("log_prob_dynamic", "dynamic"), ("log_prob_max_token_len", "max_token_len")):
        if f[child] is _UNSET:  # verl: ${oc.select:actor_rollout_ref.actor.<parent>, ...}
            f[child], inherited[child] = f[parent], parent
    if "max_model_len" not in where:  # derived by the builder from the lengths
        f["max_model_len"] = None
    if f["use_v1"] is _UNSET:
        f["use_v1"] = version != "0.8.0"
    lora = values.get(f"{AR}.model.lora.rank") or values.get(f"{AR}.model.lora_rank") or 0
    use_ref = bool(values.get(f"{AR}.actor.use_kl_loss", False) or values.get("algorithm.use_kl_in_reward", False))
    backend = "megatron" if ctx.built.entrypoint[-1].endswith("ppo_megatron_trainer") else "fsdp"
    shape = VerlShape(version=version, backend=backend, model=_model(ctx), lora_rank=int(lora), use_ref=use_ref,
                      **f)
    for key in (f"{AR}.model.lora.rank", f"{AR}.model.lora_rank"):
        if key in paths:
            where["lora_rank"] = paths[key]
    return shape, where, inherited


def miles_shape(ctx: LintContext) -> tuple[MilesShape, dict[str, str]]:
    values, paths = _arg_values(ctx)
    f, where = _fields(MILES_KEYS, values, paths)
    configured = ctx.spec.get("miles").get("actorNodes")
    shape = MilesShape(model=_model(ctx), nodes=int(ctx.spec.cluster["nodes"]), configured_actor_nodes=configured,
                       **f)
    return shape, where


def checked(ctx: LintContext) -> Checked | None:
    """The framework's violations with verified alternatives, computed once per context."""
    if ctx.spec is None or ctx.built is None:
        return None
    if "batchmath" not in ctx.extra:
        if ctx.built.framework == "verl":
            shape, where, inherited = verl_shape(ctx)
            found = with_alternatives(shape, check_verl(shape), check_verl, _links(where, inherited))
        else:
            shape, where = miles_shape(ctx)
            found = with_alternatives(shape, check_miles(shape), check_miles, _links(where, {}))
        paths = {**FALLBACK_PATHS, **where, **PREFERRED_PATHS}
        ctx.extra["batchmath"] = Checked(ctx.built.framework, shape, tuple(found), paths)
    return ctx.extra["batchmath"]


def key_path(result: Checked, field: str) -> str:
    return result.paths.get(field, FALLBACK_PATHS["model"])


def hits(ctx: LintContext, rule_ids: tuple[str, ...], framework: str | None = None) -> Iterator[Hit]:
    """One Hit per violation of the given sheet ids, for the framework that applies (None: both)."""
    result = checked(ctx)
    if result is None or (framework and result.framework != framework):
        return
    seen = set()
    for v in result.violations:
        if v.rule_id not in rule_ids:
            continue
        path = key_path(result, v.field)
        related = tuple(dict.fromkeys(key_path(result, r) for r in v.related if key_path(result, r) != path))
        if v.rule_id in ("M5", "M6", "E1", "M7", "M8", "R15"):
            related += (FALLBACK_PATHS["model"],)
        error = v.severity == ERROR
        when = WHEN[v.rule_id[0]] if error else "the run still works"
        leaf = path.rsplit(".", 1)[-1]
        alts = " or ".join(str(a) for a in v.alternatives)
        message = f"{v.message} [{v.rule_id}: {when}]" + (f"; nearest valid {leaf}: {alts}" if alts else "")
        remediation = f"set {path} to {alts}" if alts else (v.fix or None)
        if (path, message) in seen:
            continue
        seen.add((path, message))
        yield Hit(key_path=path, message=message, remediation=remediation, related=related,
                  severity=Severity.ERROR if error else Severity.WARNING)
