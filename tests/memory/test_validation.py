"""The memory model against measured peaks and fit/OOM outcomes (shared reference gpu-memory.md section b, goals
in section d). Where the check stops: the measured numbers are the sources' own logs (allocator peaks, outcomes);
no GPU runs here."""

from __future__ import annotations

import json

import pytest
from grpo_stack.memory import estimate
from grpo_stack.memory import terms as t

from tests.conftest import REPO_ROOT

from .rows import GIB, MEASURED, OUTCOMES

REFERENCE = REPO_ROOT / "tests" / "reference" / "gpu-memory"


def _peak(row) -> float:
    return max(p.allocated for p in estimate(row.run).phases) / GIB


def test_measured_peaks_within_15_percent_on_80_percent_and_25_on_all():
    errors = {m.id: _peak(m) / m.peak_gib - 1 for m in MEASURED}
    within15 = [k for k, e in errors.items() if abs(e) <= 0.15]
    assert len(within15) >= 0.8 * len(errors), errors
    assert all(abs(e) <= 0.25 for e in errors.values()), errors


def test_model_states_within_5_percent():
    """Megatron's own formula is -5.9 % on A2 (its log is the last stage, whose post-step allocation holds more
    than the states); the goal is held on the rows that log states alone."""
    errors = {m.id: sum(estimate(m.run).states.values()) / GIB / m.states_gib - 1 for m in MEASURED
              if m.states_gib and m.run.pp == 1}
    assert errors and all(abs(e) <= 0.05 for e in errors.values()), errors


def test_every_oom_row_predicted_oom_and_every_fit_row_fit():
    wrong = {o.id: estimate(o.run).oom for o in OUTCOMES if estimate(o.run).oom != o.oom}
    assert not wrong, wrong


def test_72b_disaggregated_on_16_h200_is_out_of_memory_in_the_trainer_pool():
    b1 = next(o for o in OUTCOMES if o.id == "B1")
    report = estimate(b1.run)
    over = {p.name for p in report.phases if p.total > b1.run.gpu_bytes}
    assert report.oom and {"train", "log-prob"} <= over
    assert all(p.pool == "trainer" for p in report.phases if p.name in over)


def test_megatron_formula_parity_on_its_recorded_layouts(monkeypatch):
    """Megatron-LM's theoretical_memory_usage.py outputs recorded on a CPU (gpu-memory/mlm_tmu_vs_golden.json)
    for the layouts of A1-A3: the states agree to rounding (0.01 GiB) on all three; the activations on the two
    GELU layouts, where Megatron's fixed 10 + 24/t equals the model's MLP-aware coefficient (A3 is SwiGLU: the
    model's gated MLP term is larger by design, docs/memory.md)."""
    # the model counts the cross-entropy's fp32 logits beside Megatron's output-layer term (terms.pretrain_logits);
    # with Megatron's own term in their place, the rest of the activations must be Megatron's formula
    monkeypatch.setattr(t, "pretrain_logits", t.megatron_output_layer)
    recorded = {r["test"].split(" ")[0]: r for r in json.loads((REFERENCE / "mlm_tmu_vs_golden.json").read_text())}
    rows = {"gpt3_7b_tp4_pp1_memory_speed": "A1", "gpt3_7b_tp1_pp4_memory_speed": "A2",
            "gpt_grpo_tp4_pp1_dp2_8b_throughput": "A3"}
    by_id = {m.id: m for m in MEASURED}
    for test, row in rows.items():
        run = by_id[row].run
        if row == "A3":  # the recording is Megatron's pre-training formula: its own output-layer term
            from dataclasses import replace

            run = replace(run, rl_logits=False, rollout=None)
        report = estimate(run)
        train = next(p for p in report.phases if p.name == "train")
        states = sum(report.states.values()) / GIB
        act = sum(x.bytes for x in train.terms if x.name.startswith(("activations", "logits"))) / GIB
        assert abs(states - recorded[test]["pred_weight_opt_GiB"]) <= 0.015, (test, states)
        if row != "A3":
            assert abs(act - recorded[test]["pred_act_GiB"]) <= 0.015, (test, act)


def _largest_fit(boundary) -> int:
    from dataclasses import replace

    best = 0
    for k in range(1, 4 * boundary.largest_fit):
        per_group = k * boundary.run.ulysses
        if estimate(replace(boundary.run, micro_batch=per_group, log_prob_micro=per_group)).oom:
            break
        best = k
    return best


def test_boundary_rows_are_conservative():
    """Never above an observed OOM: the predicted largest per-GPU micro batch is below the smallest that ran out of
    memory. The rows pack their micro batches (remove padding) with GSM8K's measured prompt mean and every response at
    its cap (rows.py GSM8K_PROMPT_MEAN). With a measured mean response instead (288.7 tokens at a 1024 cap, clip
    ratio 0: the step-1 log of a verl GSM8K GRPO run in verl-project/verl#2060, another model than these rows') the
    model predicts 41 / 64 / 78 per GPU against observed OOMs at 23 / 45 / 59: its per-token terms still miss memory
    these runs used, and the response cap is the bound that stays conservative."""
    from .rows import BOUNDARIES

    for b in BOUNDARIES:
        predicted = _largest_fit(b)
        assert 1 <= predicted < b.smallest_oom, (b.id, predicted)


@pytest.mark.xfail(strict=True, reason="goal not met on B8 (22 of 44: 50 %) and B9 (27 of 58: 47 %); B7 holds "
                   "(14 of 22: 64 %). Responses taken at their cap cost about a third of the fit; see the docstring")
def test_boundary_rows_predict_at_least_60_percent_of_the_largest_fit():
    """The reference's second half of the boundary goal (gpu-memory.md d3), kept as a strict expected failure so the
    day it holds the test says so."""
    from .rows import BOUNDARIES

    ratios = {b.id: _largest_fit(b) / b.largest_fit for b in BOUNDARIES}
    assert all(r >= 0.6 for r in ratios.values()), ratios
