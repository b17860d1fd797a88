"""Properties of the memory model over generated layouts (hypothesis)."""

from __future__ import annotations

from dataclasses import replace

from grpo_stack.memory import Run, estimate
from grpo_stack.memory.model import trainer_states
from hypothesis import given, settings
from hypothesis import strategies as st

from .rows import H200, preset

MODELS = ["qwen3-4b", "qwen3-8b", "qwen3-30b-a3b", "qwen2.5-72b", "qwen3-235b-a22b"]


@st.composite
def runs(draw):
    arch = preset(draw(st.sampled_from(MODELS)))
    engine = draw(st.sampled_from(["megatron", "fsdp"]))
    return Run(arch, "verl", engine, H200, draw(st.sampled_from([1, 2, 4, 8])), 8,
               tp=draw(st.sampled_from([1, 2, 4])) if engine == "megatron" else 1,
               pp=draw(st.sampled_from([1, 2])) if engine == "megatron" else 1,
               ep=draw(st.sampled_from([1, 2])) if arch.experts and engine == "megatron" else 1,
               distributed_optimizer=draw(st.booleans()), lora_rank=draw(st.sampled_from([0, 32])),
               recompute=draw(st.sampled_from(["none", "full"])), seq_len=draw(st.sampled_from([2048, 8192])),
               micro_batch=draw(st.integers(1, 4)), use_ref=draw(st.booleans()), rollout="vllm",
               rollout_tp=draw(st.sampled_from([2, 4, 8])), gmu=draw(st.sampled_from([0.3, 0.5, 0.7])),
               max_model_len=8192, requests_per_step=1024)


@settings(max_examples=60, deadline=None)
@given(runs(), st.sampled_from(["tp", "pp", "ep", "nodes"]))
def test_more_parallelism_never_raises_model_state_bytes(run, knob):
    more = replace(run, **{knob: getattr(run, knob) * 2})
    if run.engine == "fsdp" and knob != "nodes":
        return
    assert sum(trainer_states(more)[0].values()) <= sum(trainer_states(run)[0].values()) * (1 + 1e-9)


@settings(max_examples=60, deadline=None)
@given(runs())
def test_offload_never_raises_a_gpu_peak(run):
    off = replace(run, param_offload=True, optimizer_offload=True, grad_offload=True)
    before, after = estimate(run), estimate(off)
    for p, q in zip(before.phases, after.phases, strict=True):
        assert q.total <= p.total * (1 + 1e-9), (p.name, p.total, q.total)


@settings(max_examples=60, deadline=None)
@given(runs())
def test_colocated_peak_is_at_least_each_phase(run):
    report = estimate(run)
    assert all(report.peak.total >= p.total for p in report.phases)
    rollout = next(p for p in report.phases if p.name == "rollout")
    # what a phase leaves resident is in the next phase it shares the GPU with
    for name in rollout.leaves:
        assert any(x.name == name.removeprefix("trainer ") for x in report.phases[1].terms)
