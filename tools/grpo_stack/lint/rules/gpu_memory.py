"""GRPO920 gpu-memory."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..finding import Hit, Severity

CODE = "GRPO920"
NAME = "gpu-memory"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "A phase of the run (rollout, log-prob, training step, weight sync) does not fit the GPU's memory."
# A false out-of-memory finding may be suppressed only by a run measured on real GPUs: the reason must carry the
# measured peak, e.g. `# grpo-lint: disable=GRPO920 measured peak 131.5 GiB on p5en (run 2026-11-02)`.
SUPPRESSION_REASON = re.compile(r"measured peak\s+[0-9]+(\.[0-9]+)?\s*(GiB|GB)", re.IGNORECASE)
SUPPRESSION_HINT = "give the measured peak: # grpo-lint: disable=GRPO920 measured peak 131.5 GiB on <instance>"
DOC = """## What it does
Runs the per-GPU memory model (`grpo_stack.memory`, docs/memory.md) over the arguments the job builder emits and
the GPU of `global.cluster.gpuInstanceType`. For every phase of a step — rollout, the log-prob and reference
forward, the training step, the weight sync — it adds what the phase needs to what the other phases leave on the
GPU (colocated runs), or judges the trainer pool and the rollout pool on their own GPUs (disaggregated miles
runs). Model states follow the engine (Megatron with or without the distributed optimizer and expert sharding,
verl FSDP in fp32, LoRA, offload); activations follow recompute and the token budgets, with the logits and
entropy over the vocabulary (FP8 training and Megatron LoRA's gathered inputs included); the rollout engine takes
vLLM's fraction of the whole GPU (and refuses to start when less is free; FP8 weights with verl's
`rollout.quantization: fp8`) or SGLang's fraction of the free memory, with SGLang's activations and CUDA graphs
beside it.

Reports:
- **error**: a phase above the GPU's memory even at the favourable end of the length assumptions (unstated
  lengths no longer than stated, docs/memory.md "Severity by confidence"), or vLLM's start-up refusal (free memory
  below `gpuMemoryUtilization` x GPU). The message names the phase and its largest terms, and the nearest fixes
  that the model itself predicts fit;
- **warning**: a phase above the GPU's memory only at the unfavourable end of an assumption (every sample at its
  longest where the lengths are unstated, or the responses above a stated `responsePercentile` at their
  longest; a miles sample grown over several turns to `--rollout-max-context-len` (else `--sglang-context-length`)
  where that is above prompt + response; every expert active where a MoE `model.shape` states no
  `expertsPerToken`; SGLang's activations beside its `mem_fraction_static` share at SGLang's own 1.5 MiB per
  prefill token): the message names the assumption and the peak at the favourable end; stating the fact
  decides it;
- **warning**: the peak phase in the 90-100 % band (CUDA graphs and fragmentation live there);
- **error**: a KV cache smaller than one `max_model_len` sequence (the engine refuses to start);
- **warning**: a KV cache smaller than the engine's concurrency x sequence length (it preempts and slows down);
- **error**: host RAM per node under CPU offload above the node's allocatable memory.

Manifests: a RayJob whose entrypoint runs `verl.trainer.main_ppo` is modelled from its Hydra overrides, one that
runs miles' `train.py` / `train_async.py` from its arguments (nodes from `--actor-num-nodes` and, when not
colocated, `--rollout-num-gpus`), when its workers select a catalogued GPU instance type
(`node.kubernetes.io/instance-type`) and the model is known: a miles command's Megatron model arguments
(`--num-layers`, `--hidden-size`, `--num-attention-heads`, `--vocab-size` and the rest of its MODEL_ARGS), or a
model path (`actor_rollout_ref.model.path`, `--hf-checkpoint`) ending in a catalogued model's Hugging Face name;
otherwise it is not checked.

`grpo-render VALUES --job --memory` prints the whole breakdown.

## Why is this bad?
Out of memory is the costliest way a GRPO run fails: after the nodes were provisioned, the weights read and the
engine started, often at the first training step or the first long batch, and again on every restart.

## Example
```yaml
global:
  cluster: {gpuInstanceType: p5en.48xlarge, nodes: 2}
  job:
    model: {preset: qwen2.5-72b}
    parallel: {tensor: 4, pipeline: 4}
```
Use instead:
```yaml
global:
  job:
    offload: {params: true, optimizer: true}
```

## Fix
Apply one of the fixes the message lists (each is predicted to fit), or use larger or more GPUs. A run measured
to fit on real GPUs may suppress the finding only with a reason carrying the measured peak
(`disable=GRPO920 measured peak 131.5 GiB on p5en`).
"""

GIB = 2**30
RISKY = 0.90  # reference d5: fits <= 90 %, risky 90-100 %
KV_KEY = "global.job.rollout.gpuMemoryUtilization"
# The phase -> the knobs (FIX_KEYS fields) whose values key a finding points at, the first the run's backend has:
# the Megatron tensor size, else (FSDP) the micro batch or token budget of that phase.
PHASE_FIELDS = {"rollout": ("gmu",), "log-prob": ("tensor", "logProbMicro", "micro"),
                "train": ("tensor", "tokenBudget", "micro"), "weight-sync": ("tensor", "gmu"),
                "critic-values": ("tensor", "nodes"), "critic-update": ("tensor", "nodes")}


def phase_key(run, phase: str, keys: dict[str, str]) -> str:
    fields = [f for f in PHASE_FIELDS[phase] if f != "tokenBudget" or run.token_budget]
    return next((keys[f] for f in fields if f in keys), keys.get("nodes", "global.cluster.nodes"))


def check(ctx) -> Iterator[Hit]:
    from ...memory.resolve import fix_keys, run_for
    from .capacity import node_type

    if ctx.spec is not None and ctx.built is not None:
        instance = ctx.spec.cluster.get("gpuInstanceType")
        run = run_for(ctx.spec, ctx.built, node_type(ctx, instance) if isinstance(instance, str) else None)
        if run is not None:  # None: a GPU whose memory is not known (GRPO613's warning) or a shape without vocab
            keys = fix_keys(ctx.built.framework, run.engine)
            yield from findings_for_run(run, instance, keys, lambda kind: {"key_path": kind})
        return
    yield from _manifests(ctx)


def _manifests(ctx) -> Iterator[Hit]:
    """RayJobs that run verl's or miles' trainer, where the manifest states the GPU type and the model."""
    from ...memory.manifest import rayjob_run
    from ...memory.resolve import FIX_KEYS

    for o in ctx.of_kind("RayJob"):
        run = rayjob_run(o.obj)
        if run is None:
            continue
        instance = next(iter(_selected_types(o.obj)), "")
        keys = FIX_KEYS["miles-argv" if run.framework == "miles" else "verl-hydra-" + run.engine]
        yield from findings_for_run(run, instance, keys, lambda kind, o=o: {"key_path": "spec.entrypoint", "obj": o})


def _selected_types(obj) -> list[str]:
    from ...memory.manifest import INSTANCE_TYPE_LABELS

    groups = ((obj.get("spec") or {}).get("rayClusterSpec") or {}).get("workerGroupSpecs") or []
    out = []
    for g in groups:
        selector = (((g or {}).get("template") or {}).get("spec") or {}).get("nodeSelector") or {}
        out += [str(selector[k]) for k in INSTANCE_TYPE_LABELS if isinstance(selector, dict) and selector.get(k)]
    return out


def findings_for_run(run, instance, keys: dict[str, str], where) -> Iterator[Hit]:
    from ...memory import estimate

    report = estimate(run)
    gpu = f"{instance} GPU: {run.gpu_bytes / GIB:.1f} GiB"
    over = [p for p in report.phases if p.total > run.gpu_bytes]
    if report.engine_refusal and not any(p.name == "rollout" for p in over):
        over = [p for p in report.phases if p.name == "rollout"] + over
    if over:
        worst = max(over, key=lambda p: p.total)
        at = where(phase_key(run, worst.name, keys))
        favourable = _favourable(run)
        yield (_oom(run, report, worst, over, gpu, keys, at) if favourable is None else
               _assumption_bound(run, worst, favourable, gpu, keys, at))
    elif report.fraction(report.peak) > RISKY:
        p = report.peak
        yield Hit(**where(phase_key(run, p.name, keys)), message=f"{p.name} phase peaks at {p.total / GIB:.1f} GiB = "
                  f"{100 * report.fraction(p):.0f} % of the {gpu} ({_top(p)}): within 10 % of the GPU, where CUDA "
                  "graphs and fragmentation decide", severity=Severity.WARNING,
                  remediation=_fix_text(run, keys) or "leave more headroom")
    if report.kv_tokens is not None and not any(p.name == "rollout" for p in over):
        yield from _kv(run, report, where(KV_KEY))
    if report.host_oom:
        yield Hit(**where("global.cluster.gpuInstanceType"),
                  message=f"offloaded states need {report.host_bytes / GIB:.0f} GiB of host RAM per node "
                  f"({run.gpus_per_node} GPUs) > {run.node_ram_bytes / GIB:.0f} GiB allocatable on {instance}",
                  remediation="turn offload off where the GPU has room, or add nodes")


def _top(phase, n: int = 3) -> str:
    terms = sorted(phase.terms, key=lambda x: -x.bytes)[:n]
    return ", ".join(f"{x.name} {x.bytes / GIB:.1f}" for x in terms)


def _fix_labels(run, keys: dict[str, str]) -> list[tuple[str, str]]:
    from ...memory import nearest_fixes

    out = []
    for fixes, rep in nearest_fixes(run):
        if not all(f.field in keys for f in fixes):
            continue
        label = " + ".join(_label(keys[f.field], f.value) for f in fixes)
        out.append((label, f"{label} (peak {rep.peak.name} {rep.peak.total / GIB:.1f} GiB)"))
    return out


def _label(key: str, value) -> str:
    key = key.removeprefix("global.")
    if key.endswith(".offload"):
        return f"{key} params+optimizer on"
    if key.endswith("+optimizer_offload"):  # a Hydra pair
        base = key.rsplit(".", 1)[0]
        return f"{base}.param_offload=True {base}.optimizer_offload=True"
    if key.endswith(".enable_gradient_checkpointing"):  # FSDP's recompute: switched on, not a granularity
        value = "True" if key.startswith("actor_rollout_ref.") else "true"
    if key.startswith(("actor_rollout_ref.", "trainer.")):
        return f"{key}={value}"
    return f"{key} {value}"


def _fix_text(run, keys: dict[str, str]) -> str:
    labels = _fix_labels(run, keys)
    return "predicted to fit: " + "; or ".join(text for _, text in labels) if labels else ""


def _oom(run, report, worst, over, gpu: str, keys: dict[str, str], at: dict) -> Hit:
    fix = _fix_text(run, keys)
    others = [p.name for p in over if p is not worst]
    why = report.engine_refusal if worst.name == "rollout" and report.engine_refusal else ""
    if worst.total > run.gpu_bytes:
        message = (f"{worst.name} phase needs {worst.total / GIB:.1f} GiB per GPU > {gpu} ({_top(worst)}"
                   f"{'; ' + why if why else ''})")
    else:  # the engine refuses to start although the phase's sum would fit
        message = f"{worst.name} phase: {why} ({gpu}; {_top(worst)})"
    message += f"; also over: {', '.join(others)}" if others else ""
    labels = _fix_labels(run, keys)
    tail = (f"; nearest fixes: {', '.join(lbl for lbl, _ in labels)}" if labels else
            "; no single change the model tries fits: use larger or more GPUs")
    return Hit(**at, message=message + tail, remediation=fix or None,
               related=() if "obj" in at else ("global.cluster.gpuInstanceType",))


def _lengths_assumed(run) -> bool:
    """The point estimate takes the packed samples at a length the values do not state, or holds the responses
    above a stated percentile at their longest."""
    return (run.favourable_mean_seq_len is not None and run.favourable_mean_seq_len != run.mean_seq_len
            or run.percentile_seq_len is not None)


def _favourable_mean(run) -> int | None:
    """The packed samples' length at the favourable end: the stated means only, an unstated part at none."""
    return run.mean_seq_len if run.favourable_mean_seq_len is None else run.favourable_mean_seq_len


def _turns_assumed(run) -> bool:
    """A miles sample may grow over several turns to the context a turn may fill (--rollout-max-context-len, else
    --sglang-context-length): the point estimate takes the longest at that bound."""
    return run.one_turn_seq_len is not None


def _topk_assumed(run) -> bool:
    """A MoE shape without its top-k: the point estimate counts every expert."""
    return bool(run.arch.experts) and not run.arch.topk_stated


def _critic_assumed(run) -> bool:
    """verl trains a critic (algorithm.adv_estimator gae, its default) whose model the run does not name: taken as
    the actor's."""
    return run.critic is not None and run.critic.assumed


def _reserve_assumed(run) -> bool:
    """SGLang's activations beside its share are taken at its own reserve rule (1.5 MiB per prefill token)."""
    return run.rollout == "sglang" and run.sglang_reserve_rule


def _assumptions(run) -> list[str]:
    """The assumptions the point estimate makes at their unfavourable end, as the warning names them."""
    out = []
    if _lengths_assumed(run):
        if run.percentile_seq_len is not None:
            percentile, length = run.percentile_seq_len
            taken = (f"the responses above the stated {percentile:g}th percentile at their longest and the others "
                     f"at it ({run.seq_len} and {length} tokens per packed sample")
        else:
            taken = ("every sample at its longest" if run.mean_seq_len is None else "the stated means") + (
                f" ({run.mean_seq_len or run.seq_len} tokens per packed sample")
        out.append(f"{taken}; the stated means only: {_favourable_mean(run)})")
    if _turns_assumed(run):
        out.append(f"the longest sample grown over several turns to the context cap ({run.seq_len} tokens; one turn, "
                   f"prompt + response: {run.one_turn_seq_len})")
    if _topk_assumed(run):
        out.append(f"every one of the {run.arch.experts} experts active per token (the shape states no "
                   "expertsPerToken; at least 1)")
    if _reserve_assumed(run):
        out.append("SGLang's activations beside its mem_fraction_static share at SGLang's own reserve rule (1.5 MiB "
                   "per prefill-chunk token; at least one layer's forward)")
    if _critic_assumed(run):
        out.append("a critic of the actor's size, which verl trains for algorithm.adv_estimator gae (its default), "
                   "no critic.model.path naming it (at least: none)")
    return out


def _favourable(run):
    """The estimate at the favourable end of every assumption when every phase fits there (the verdict then rests
    on the assumptions alone), else None."""
    from dataclasses import replace

    from ...memory import estimate

    if not (_lengths_assumed(run) or _turns_assumed(run) or _topk_assumed(run) or _reserve_assumed(run)
            or _critic_assumed(run)):
        return None
    arch = replace(run.arch, topk=1) if _topk_assumed(run) else run.arch
    turn, mean = run.one_turn_seq_len or run.seq_len, _favourable_mean(run)
    report = estimate(replace(run, arch=arch, seq_len=turn, one_turn_seq_len=None,
                              mean_seq_len=None if mean is None else min(mean, turn), percentile_seq_len=None,
                              sglang_reserve_rule=False, critic=None if _critic_assumed(run) else run.critic))
    fits = not report.engine_refusal and all(p.total <= run.gpu_bytes for p in report.phases)
    return report if fits else None


def _assumption_bound(run, worst, favourable, gpu: str, keys: dict[str, str], at: dict) -> Hit:
    """Over the GPU only at the unfavourable end of an assumption: a warning naming the assumptions that decide."""
    states = []
    if _lengths_assumed(run):
        if "obj" in at:
            states.append("the data's mean lengths, which the manifest cannot state")
        elif run.favourable_mean_seq_len is None:  # both means stated: only the percentile's tail is assumed
            states.append("a peak measured by a run of this shape (grpo-render --job --memory --from-log)")
        else:
            states.append("global.job.lengths.meanPrompt and meanResponse (the data's prompt_length/mean, a "
                          "previous run's response_length/mean)")
    if _turns_assumed(run):
        states.append("a peak measured by a run of this shape (grpo-render --job --memory --from-log), or a context "
                      "cap the trainer can hold (--rollout-max-context-len, else --sglang-context-length)")
    if _topk_assumed(run):
        states.append("global.job.model.shape.expertsPerToken (num_experts_per_tok)")
    if _reserve_assumed(run):
        states.append("a measured rollout peak (a lower --sglang-mem-fraction-static or "
                      "--sglang-chunked-prefill-size leaves SGLang more room)")
    if _critic_assumed(run):
        states.append("critic.model.path (or algorithm.adv_estimator=grpo, which trains no critic)")
    fit = favourable.peak
    return Hit(**at, severity=Severity.WARNING,
               message=f"{worst.name} phase needs {worst.total / GIB:.1f} GiB per GPU > {gpu} ({_top(worst)}) with "
               f"{'; and '.join(_assumptions(run))}; at the favourable end of those the peak is {fit.name} "
               f"{fit.total / GIB:.1f} GiB and fits: the verdict rests on the assumptions",
               remediation=f"state {' and '.join(states)} to decide it; " + (_fix_text(run, keys)
                                                                              or "or use larger GPUs"))


def _kv(run, report, at: dict) -> Iterator[Hit]:
    engine = "vLLM" if run.rollout == "vllm" else "SGLang"
    tokens = report.kv_tokens
    related = () if "obj" in at else ("global.job.rollout.tensorParallel",)
    if tokens < report.kv_need_one:
        yield Hit(**at, message=f"{engine}'s KV cache holds {tokens:.0f} tokens per engine < one max_model_len of "
                  f"{report.kv_need_one}: the engine refuses to start", related=related,
                  remediation="raise the engine's memory share or its tensor parallel size")
    elif report.kv_need_all and tokens < report.kv_need_all:
        yield Hit(**at, message=f"{engine}'s KV cache holds {tokens:.0f} tokens per engine < {report.kv_need_all} "
                  "for its concurrency x sequence length: it preempts sequences and generates more slowly",
                  severity=Severity.WARNING, related=related,
                  remediation="raise the engine's memory share or its tensor parallel size, or accept the slower "
                              "rollout")
