"""What verl really holds per phase: packed micro batches, the entropy only when its coefficient is set, the FSDP
actor's gradients freed after the step, the recomputed layer and the logits one after the other. Where the check
stops: the behaviours are read from verl's source (cited in tools/grpo_stack/memory/model.py); no GPU runs here,
the measured outcomes they are held to are tests/memory/test_validation.py's rows."""

from __future__ import annotations

import json
from dataclasses import replace

import yaml
from grpo_stack.cli.render import main
from grpo_stack.memory import Run, estimate
from grpo_stack.paths import REPO_ROOT

from .rows import GIB, H200, preset

VALUES = REPO_ROOT / "values" / "qwen3-8b.yaml"  # verl FSDP, static micro batches, 1024 + 4096 tokens


def _memory(capsys, tmp_path, job: dict | None = None) -> dict:
    files = [str(VALUES)]
    if job:
        overlay = tmp_path / "overlay.yaml"
        overlay.write_text(yaml.safe_dump({"global": {"job": job}}))
        files = ["-f", str(VALUES), str(overlay)]
    assert main([*files, "--job", "--memory", "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def _phase(report: dict, name: str) -> dict:
    return next(p for p in report["phases"] if p["phase"] == name)


def _lengths(**means) -> dict:
    return {"lengths": {"maxPrompt": 1024, "maxResponse": 4096, **means}}


def test_expected_mean_lengths_shrink_the_packed_training_step(capsys, tmp_path):
    longest = _memory(capsys, tmp_path)
    at_caps = _memory(capsys, tmp_path, _lengths(meanPrompt=1024, meanResponse=4096))
    gsm8k = _memory(capsys, tmp_path, _lengths(meanPrompt=105, meanResponse=300))
    assert _phase(at_caps, "train")["gib"] == _phase(longest, "train")["gib"]  # absent = every sample at its cap
    assert _phase(gsm8k, "train")["gib"] < _phase(longest, "train")["gib"] - 1
    assert _phase(gsm8k, "log-prob")["gib"] < _phase(longest, "log-prob")["gib"]


def test_a_mean_above_its_cap_counts_as_the_cap(capsys, tmp_path):
    longest = _memory(capsys, tmp_path)
    above = _memory(capsys, tmp_path, _lengths(meanPrompt=4000, meanResponse=9000))
    assert _phase(above, "train")["gib"] == _phase(longest, "train")["gib"]


def test_the_entropy_coefficient_adds_the_entropy_to_the_training_logits(capsys, tmp_path):
    def logits(report):
        return next(t["gib"] for t in _phase(report, "train")["terms"] if t["term"] in ("logits", "recomputed layer"))

    without = _memory(capsys, tmp_path)  # verl's default entropy_coeff 0
    with_entropy = _memory(capsys, tmp_path, {"entropyCoef": 0.001})
    assert logits(with_entropy) > logits(without)


def _fsdp(**kw) -> Run:
    return Run(preset("qwen3-8b"), "verl", "fsdp", H200, 1, 8, recompute="full", seq_len=4096, rollout="vllm",
               rollout_tp=2, **{"micro_batch": 2, **kw})


def _terms(run: Run, phase: str) -> dict[str, float]:
    return {t.name: t.bytes for t in next(p for p in estimate(run).phases if p.name == phase).terms}


def test_the_fsdp_log_prob_pass_holds_no_gradients_and_no_offloaded_optimizer():
    assert "gradients" not in _terms(_fsdp(), "log-prob") and "optimizer" in _terms(_fsdp(), "log-prob")
    offloaded = _fsdp(param_offload=True, optimizer_offload=True)
    assert set(_terms(offloaded, "log-prob")) & {"gradients", "optimizer"} == set()
    assert {"weights", "gradients", "optimizer"} <= set(_terms(offloaded, "train"))  # reloaded for the step
    rollout = _terms(_fsdp(), "rollout")
    assert "trainer gradients" not in rollout and "trainer optimizer" in rollout


def test_a_megatron_trainer_keeps_its_gradient_buffer_between_phases():
    run = Run(preset("qwen3-8b"), "verl", "megatron", H200, 1, 8, tp=2, seq_len=4096, rollout="vllm", rollout_tp=2)
    assert "gradients" in _terms(run, "log-prob") and "trainer gradients" in _terms(run, "rollout")


def test_verl_megatron_offload_leaves_the_log_prob_pass_the_parameters_alone():
    """verl's Megatron worker frees the gradient buffer with the offloaded parameters and reloads the parameters
    alone for compute_log_prob; the offloaded optimizer comes back for the update only. miles, which offloads by
    --offload-train instead, keeps both."""
    run = Run(preset("qwen3-8b"), "verl", "megatron", H200, 1, 8, tp=2, seq_len=4096, rollout="vllm", rollout_tp=2,
              param_offload=True, grad_offload=True, optimizer_offload=True)
    assert set(_terms(run, "log-prob")) & {"gradients", "optimizer"} == set()
    assert {"weights", "gradients", "optimizer"} <= set(_terms(run, "train"))
    params_only = replace(run, grad_offload=False, optimizer_offload=False)
    assert "gradients" not in _terms(params_only, "log-prob") and "optimizer" in _terms(params_only, "log-prob")
    assert {"gradients", "optimizer"} <= set(_terms(replace(run, framework="miles"), "log-prob"))


def test_it_decides_a_published_verl_megatron_moe_recipe():
    """Qwen3-30B-A3B with EP 8 on 32 H100s and every state offloaded, the log-prob pass over 30,720 tokens
    (tests/memory/published rows-2026-12-07b.json, verl Megatron practice, script 12): published as running. With
    the gradients and the optimizer counted in the log-prob pass, the pass was 86 GiB, an error."""
    from tests.memory.published.adapt import architectures, run_of
    from tests.memory.published.score import verdict
    from tests.memory.published.split import rows

    row = next(r for r in rows() if r["id"] == "verl/practice-dapo-qwen3-30b-a3b-32xh100-ep8-30k-mini64")
    run = run_of(row, architectures())
    log_prob = next(p for p in estimate(run).phases if p.name == "log-prob")
    assert log_prob.total < run.gpu_bytes and verdict(run) != "error"


def test_full_recompute_counts_the_larger_of_the_logits_and_the_recomputed_layer_not_both():
    train = _terms(_fsdp(), "train")
    padded = replace(_fsdp(), recompute="selective")
    assert ("logits" in train) != ("recomputed layer" in train)
    assert sum(train.values()) < sum(_terms(padded, "train").values())


def test_packing_without_a_mean_is_the_padded_bound_and_one_sample_stays_at_its_longest():
    padded = _fsdp(micro_batch=4)
    assert replace(padded, remove_padding=True).train_tokens == padded.train_tokens == 4 * 4096
    packed = replace(padded, remove_padding=True, mean_seq_len=1000)
    assert packed.train_tokens == 4096 + 3 * 1000
    assert replace(packed, micro_batch=1).train_tokens == 4096
    assert sum(_terms(packed, "train").values()) / GIB < sum(_terms(padded, "train").values()) / GIB


def _percentile(percentile: float, tokens: int, **means) -> dict:
    return _lengths(**means, responsePercentile={"percentile": percentile, "tokens": tokens})


def test_a_stated_response_percentile_holds_the_long_tail_at_its_longest(capsys, tmp_path):
    """qwen3-8b.yaml's micro batch of 4 under a p95 of 1,000 tokens: one sample (5 % of 4, at least one) at 1024 +
    4096, three at the mean prompt + 1,000 -- between the means' rule and every sample at its longest."""
    longest = _phase(_memory(capsys, tmp_path), "train")["gib"]
    means = _phase(_memory(capsys, tmp_path, _lengths(meanPrompt=105, meanResponse=300)), "train")["gib"]
    p95 = _phase(_memory(capsys, tmp_path, _percentile(95, 1000, meanPrompt=105, meanResponse=300)), "train")["gib"]
    assert means < p95 < longest
    at_cap = _memory(capsys, tmp_path, _percentile(95, 4096, meanPrompt=1024, meanResponse=300))
    assert _phase(at_cap, "train")["gib"] == longest  # every response at the cap: nothing shorter is claimed


def test_the_percentile_rule_counts_the_share_above_it_and_never_below_the_means():
    run = replace(_fsdp(micro_batch=40), seq_len=5000, remove_padding=True, mean_seq_len=600)
    assert run.packed_tokens(40) == 5000 + 39 * 600
    p90 = replace(run, percentile_seq_len=(90, 1000))
    assert p90.packed_tokens(40) == 4 * 5000 + 36 * 1000  # 10 % of 40 above the 90th percentile
    assert replace(p90, percentile_seq_len=(99.9, 1000)).packed_tokens(40) == 5000 + 39 * 1000  # at least one
    assert replace(p90, percentile_seq_len=(90, 100)).packed_tokens(40) == 5000 + 39 * 600  # below the means
    assert replace(p90, mean_seq_len=None).packed_tokens(40) == 4 * 5000 + 36 * 1000
    assert replace(p90, remove_padding=False).packed_tokens(40) == 40 * 5000  # padded: the percentile is moot


def test_a_token_budget_makes_as_many_micro_batches_as_the_steps_tokens_need():
    """verl 0.9.1 cuts a step into ceil(tokens / (budget x CP)) micro batches, at most one per sample
    (prepare_micro_batches); miles first-fits samples into bins of that size. A static size divides the samples.
    Where the check stops: the count is read from verl's and miles' source; no Megatron step runs here."""
    run = Run(preset("qwen3-8b"), "verl", "megatron", H200, 1, 8, pp=4, seq_len=8192, remove_padding=True,
              token_budget=16384, step_samples=32)
    assert run.microbatches == 16  # every sample at its longest: two per budget
    assert replace(run, mean_seq_len=1000).microbatches == 3  # 8192 + 31 x 1000 tokens
    assert replace(run, mean_seq_len=0).microbatches == 1
    assert replace(run, cp=2).microbatches == 8
    # the budget is per GPU: verl and miles multiply it by the GPUs a micro batch is split over
    assert replace(run, cp=2).train_tokens == 2 * run.train_tokens == 32768
    assert replace(run, token_budget=None, micro_batch=4).microbatches == 8
    longest, short = estimate(run), estimate(replace(run, mean_seq_len=0))
    longest_train, short_train = (next(p.total for p in r.phases if p.name == "train") for r in (longest, short))
    assert longest_train > short_train
