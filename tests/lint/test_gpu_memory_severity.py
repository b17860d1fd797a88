"""GRPO920 by confidence: an error only where the run is over the GPU at the favourable end of every length
assumption; a warning naming the lengths where only the unfavourable end is over. Where the check stops: the
verdicts are the memory model's (docs/memory.md); no GPU runs here."""

from __future__ import annotations

from grpo_stack.lint.engine import lint_values
from grpo_stack.memory.resolve import favourable_length
from grpo_stack.paths import REPO_ROOT

BASE = str(REPO_ROOT / "values" / "qwen3-8b.yaml")
RUN = """global:
  job:
    verl:
      batch: {ppoMicroBatchSizePerGpu: 8}
      overrides: {actor_rollout_ref.model.enable_gradient_checkpointing: false}
"""


def _memory(tmp_path, extra: str = ""):
    overlay = tmp_path / "run.yaml"
    overlay.write_text(RUN + extra)
    return [f for f in lint_values([BASE, str(overlay)], release="grpo", namespace="grpo").findings
            if f.code == "GRPO920"]


def test_unstated_lengths_that_decide_the_verdict_are_a_warning_naming_them(tmp_path):
    [finding] = _memory(tmp_path)
    assert finding.severity.value == "warning"
    assert "every sample at its longest (5120 tokens" in finding.message
    assert "the stated means only: 0)" in finding.message
    assert "rests on the assumptions" in finding.message
    assert "global.job.lengths.meanPrompt and meanResponse" in finding.remediation


def test_stated_long_responses_make_it_an_error(tmp_path):
    [finding] = _memory(tmp_path, "    lengths: {meanPrompt: 200, meanResponse: 3000}\n")
    assert finding.severity.value == "error"
    assert "train phase needs" in finding.message


def test_stated_short_responses_make_it_fit(tmp_path):
    assert not [f for f in _memory(tmp_path, "    lengths: {meanPrompt: 200, meanResponse: 300}\n")
                if f.severity.value == "error"]


LONG_TAIL = "    lengths: {maxPrompt: 1024, maxResponse: 4096, meanPrompt: 200, meanResponse: 300, " \
            "responsePercentile: {percentile: 95, tokens: %d}}\n"


def test_a_long_tail_above_the_stated_means_is_a_warning_naming_the_percentile(tmp_path):
    """The stated means fit; a p95 of 2,500 tokens puts the train phase over the GPU: the verdict rests on the
    tail's share at its longest, so it is a warning, and only a measured peak decides it."""
    assert not _memory(tmp_path, LONG_TAIL.replace(", responsePercentile: {percentile: 95, tokens: %d}", ""))
    [finding] = _memory(tmp_path, LONG_TAIL % 2500)
    assert finding.severity.value == "warning"
    assert "the responses above the stated 95th percentile at their longest" in finding.message
    assert "(5120 and 2700 tokens per packed sample; the stated means only: 500)" in finding.message
    assert "--from-log" in finding.remediation and "meanPrompt" not in finding.remediation


def test_a_short_tail_stated_without_means_decides_the_verdict(tmp_path):
    """Unstated means: every sample at its longest is over (a warning); a p95 of 600 tokens fits."""
    unstated = "    lengths: {maxPrompt: 1024, maxResponse: 4096%s}\n"
    assert [f.severity.value for f in _memory(tmp_path, unstated % "")] == ["warning"]
    assert not _memory(tmp_path, unstated % ", responsePercentile: {percentile: 95, tokens: 600}")


def test_a_run_over_the_gpu_at_both_ends_stays_an_error():
    bad = REPO_ROOT / "tests" / "lint" / "rules" / "fixtures" / "GRPO920" / "bad-72b-full-finetune-2-p5en.yaml"
    findings = lint_values([str(REPO_ROOT / "values" / "qwen25-72b.yaml"), str(bad)], release="grpo",
                           namespace="grpo").findings
    assert [f.severity.value for f in findings if f.code == "GRPO920"] == ["error"]


def test_the_favourable_length_is_the_stated_means_and_nothing_more():
    assert favourable_length({"maxPrompt": 1024, "maxResponse": 4096}) == 0
    assert favourable_length({"maxPrompt": 1024, "maxResponse": 4096, "meanPrompt": 105}) == 105
    assert favourable_length({"maxPrompt": 1024, "maxResponse": 4096, "meanResponse": 9000}) == 4096
    assert favourable_length({"maxPrompt": 1024, "maxResponse": 4096, "meanPrompt": 105,
                              "meanResponse": 300}) is None


SHAPE = ("global:\n  job:\n    lengths: {{meanPrompt: 200, meanResponse: 8000}}\n{extra}"
         "    model:\n      preset: null\n"
         "      shape: {{layers: 48, hidden: 2048, intermediate: 768, heads: 32, kvHeads: 4, headDim: 128, "
         "experts: 128, vocab: 151936, maxPositions: 40960{topk}}}\n")


def _shape(tmp_path, topk: str = "", extra: str = ""):
    """values/qwen3-30b.yaml with its model given as a shape (the preset's numbers), the lengths stated."""
    overlay = tmp_path / "shape.yaml"
    overlay.write_text(SHAPE.format(topk=topk, extra=extra))
    return [f for f in lint_values([str(REPO_ROOT / "values" / "qwen3-30b.yaml"), str(overlay)], release="grpo",
                                   namespace="grpo").findings if f.code == "GRPO920"]


def test_a_moe_shape_without_its_top_k_is_judged_at_both_ends(tmp_path):
    """Without expertsPerToken every expert's activations are counted: over the H200, a warning naming it; the
    routed top-k stated, the same run fits; a run over the GPU even at top-1 stays an error."""
    [finding] = _shape(tmp_path)
    assert finding.severity.value == "warning"
    assert "every one of the 128 experts active per token" in finding.message
    assert "global.job.model.shape.expertsPerToken" in finding.remediation
    assert not _shape(tmp_path, ", expertsPerToken: 8")
    huge = "    verl: {batch: {ppoMicroBatchSizePerGpu: 16}}\n"
    assert [f.severity.value for f in _shape(tmp_path, extra=huge)] == ["error"]


MILES = str(REPO_ROOT / "values" / "miles-qwen3-4b.yaml")
ON_H100 = "global:\n  cluster: {gpuInstanceType: p5.48xlarge, efaPerNode: 32}\n"


def _miles_memory(tmp_path, extra_args: list[str]):
    overlay = tmp_path / "run.yaml"
    overlay.write_text(ON_H100 + f"  job:\n    miles:\n      extraArgs: {extra_args}\n")
    return [f for f in lint_values([MILES, str(overlay)], release="grpo", namespace="grpo").findings
            if f.code == "GRPO920"]


def test_a_multi_turn_context_the_trainer_cannot_hold_is_a_warning_naming_it(tmp_path):
    """miles asks each turn for at most the room --rollout-max-context-len leaves, so a multi-turn sample grows to
    it: at 131,072 tokens the train phase's logits put it over an H100; at one turn (prompt + response, 9,216) it
    fits, so the verdict rests on how many turns the samples take: a warning naming the context length."""
    [finding] = [f for f in _miles_memory(tmp_path, ["--rollout-max-context-len", "131072"])
                 if "phase needs" in f.message]
    assert finding.severity.value == "warning"
    assert "grown over several turns to the context cap (131072 tokens; one turn, prompt + response: 9216)" \
        in finding.message
    assert "a context cap the trainer can hold (--rollout-max-context-len" in finding.remediation


def test_a_context_length_bounds_a_sample_and_only_a_longer_one_is_assumed():
    """miles' --rollout-max-context-len caps every request (else SGLang's --sglang-context-length): below prompt +
    response it is the longest sample, with nothing assumed; above it, the point estimate's longest sample and one
    turn its favourable end."""
    from grpo_stack.memory.resolve import miles_run

    from tests.memory.rows import H100, preset

    lengths = {"rollout-max-prompt-len": 1024, "rollout-max-response-len": 8192}
    bounds = {ctx: miles_run(preset("qwen3-4b"), {**lengths, **({"rollout-max-context-len": ctx} if ctx else {})},
                             1, H100, None) for ctx in (None, 4096, 9216, 32768)}
    assert {ctx: (r.seq_len, r.one_turn_seq_len) for ctx, r in bounds.items()} == {
        None: (9216, None), 4096: (4096, None), 9216: (9216, None), 32768: (32768, 9216)}
    # without miles' own cap, the context SGLang serves bounds a turn (it takes no longer request)
    served = miles_run(preset("qwen3-4b"), {**lengths, "sglang-context-length": 65536}, 1, H100, None)
    assert (served.seq_len, served.one_turn_seq_len) == (65536, 9216)


PIPELINE = """global:
  job:
    parallel: {pipeline: 4}
    verl:
      batch: {ppoMicroBatchSizePerGpu: null, logProbMicroBatchSizePerGpu: null, useDynamicBsz: true,
              ppoMaxTokenLenPerGpu: 53248}
      overrides: {actor_rollout_ref.actor.megatron.override_transformer_config.recompute_granularity: null}
"""


def _pipeline(tmp_path, lengths: str = ""):
    overlay = tmp_path / "pipeline.yaml"
    overlay.write_text(PIPELINE + lengths)
    return [f for f in lint_values([str(REPO_ROOT / "values" / "qwen3-235b.yaml"), str(overlay)], release="grpo",
                                   namespace="grpo").findings if f.code == "GRPO920"]


def test_a_token_budget_under_a_pipeline_holds_as_many_micro_batches_as_the_lengths_make(tmp_path):
    """Under a token budget the step's micro batches are as many as its tokens need (verl's
    prepare_micro_batches), so the first pipeline stage holds four in flight only when the samples are long: at
    every sample's longest the train phase is over the GPU, at the stated means only it is not. Unstated, that is
    a warning; long stated means make it an error, short ones a fit."""
    [unstated] = _pipeline(tmp_path)
    assert unstated.severity.value == "warning"
    assert "train phase needs 243.1 GiB" in unstated.message and "activations (first stage" in unstated.message
    assert "every sample at its longest" in unstated.message
    [long] = _pipeline(tmp_path, "    lengths: {maxPrompt: 2048, maxResponse: 24576, meanPrompt: 500, "
                                 "meanResponse: 8000}\n")
    assert long.severity.value == "error"
    assert not _pipeline(tmp_path, "    lengths: {maxPrompt: 2048, maxResponse: 24576, meanPrompt: 500, "
                                   "meanResponse: 300}\n")
