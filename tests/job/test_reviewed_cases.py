"""Table tests for the configurations the reviews found crashing (or documented as working)."""

from __future__ import annotations

import pytest

from .cases import lint, sheet_id, spec_with

QWEN72B = {"job.rollout.samplesPerPrompt": 4, "job.verl.batch.ppoMiniBatchSize": 24,
           "job.verl.batch.ppoMicroBatchSizePerGpu": 2, "cluster.nodes": 6}


def errors(spec) -> set[str]:
    _, hits = lint(spec)
    return {f"{code}/{sheet_id(h)}" for code, h in hits if h.severity.value == "error"}


@pytest.mark.parametrize(("batch", "bad"), [(256, True), (128, True), (96, False), (192, False), (384, False)])
@pytest.mark.parametrize("v1_trainer", [False, True])
def test_qwen25_72b_tp4_pp4_48_gpus(base_specs, batch, bad, v1_trainer):
    """Review: qwen25-72b at TP4/PP4 on 48 GPUs (dp=3), n=4, M=24, m=2: train_batch_size 256 and 128 abort,
    96 / 192 / 384 pass (the three documented commands that aborted)."""
    spec = spec_with(base_specs["qwen25-72b"], {**QWEN72B, "job.verl.batch.trainBatchSize": batch,
                                                 "job.verl.useV1Trainer": v1_trainer})
    got = errors(spec)
    assert ("GRPO302/V2" in got) == bad, got
    if not bad:
        assert not got


def test_qwen25_72b_message_names_numbers_and_alternatives(base_specs):
    """Review: the abort message must carry the numbers and valid alternatives (no calculator needed)."""
    spec = spec_with(base_specs["qwen25-72b"], {**QWEN72B, "job.verl.batch.trainBatchSize": 256})
    _, hits = lint(spec)
    hit = next(h for code, h in hits if code == "GRPO302")
    assert "train_batch_size=256 x n=4 = 1024 rows" in hit.message and "minimal batch 6" in hit.message
    assert "nearest valid trainBatchSize: 240 or 264" in hit.message
    assert hit.key_path == "global.job.verl.batch.trainBatchSize"
    assert hit.remediation == "set global.job.verl.batch.trainBatchSize to 240 or 264"


@pytest.mark.parametrize(("mini", "bad"), [(64, True), (24, False), (48, False)])
def test_fsdp_48_gpus_mini_batch(base_specs, mini, bad):
    """Review: FSDP on 48 GPUs, n=4, m=2: ppo_mini_batch_size 64 aborts (64*4 rows over 48 ranks), 24 and 48
    pass. train_batch_size is 192 here: the reviewed 256 also fails V2 at 48 GPUs (1024 % 48) in verl 0.8+."""
    spec = spec_with(base_specs["qwen3-8b"], {"cluster.nodes": 6, "job.rollout.samplesPerPrompt": 4,
                                               "job.verl.batch.trainBatchSize": 192,
                                               "job.verl.batch.ppoMiniBatchSize": mini,
                                               "job.verl.batch.ppoMicroBatchSizePerGpu": 2})
    got = errors(spec)
    assert ("GRPO306/R1" in got) == bad, got
    if not bad:
        assert not got


def test_mini_batch_emitted_once(base_specs):
    """Review: ppo_mini_batch_size was emitted twice (Hydra: last wins); the rules read the one emitted value."""
    for name, spec in base_specs.items():
        ctx, _ = lint(spec)
        keys = [a.key for a in ctx.built.args]
        assert len(keys) == len(set(keys)), name


# Every model x backend at 1 and 6 nodes, in the layout of a shipped values file, with that file's batch sizes
# ("shipped") and with the reviewed default (B=96, M=24, n=4, m=2, lp=4), and the errors grpo-lint must report.
LAYOUTS = {"fsdp": "qwen3-8b", "megatron-tp4pp4": "qwen25-72b", "megatron-moe": "qwen3-30b"}
REVIEWED_DEFAULT = {"job.verl.batch.trainBatchSize": 96, "job.verl.batch.ppoMiniBatchSize": 24,
                    "job.rollout.samplesPerPrompt": 4, "job.verl.batch.ppoMicroBatchSizePerGpu": 2,
                    "job.verl.batch.logProbMicroBatchSizePerGpu": 4}
SIX_NODES_SHIPPED = {"GRPO302/V2", "GRPO306/R1"}  # B=128, M=32, n=8: 1024 % 48 and 256 over dp 48 / 24
TP4PP4_ONE_NODE = {"GRPO301/V1"}  # 8 GPUs cannot hold a 16-GPU model replica
EXPECTED = {
    **{(m, lay, 6, "shipped"): SIX_NODES_SHIPPED for m in ("qwen3-8b", "qwen2.5-72b", "qwen3-30b-a3b",
                                                           "qwen3-235b-a22b") for lay in ("fsdp", "megatron-moe")},
    **{(m, "megatron-tp4pp4", 1, p): TP4PP4_ONE_NODE for m in ("qwen3-8b", "qwen2.5-72b", "qwen3-30b-a3b")
       for p in ("shipped", "reviewed")},
    # 94 layers do not split over pp=4 (qwen3-235b ships with pp=2)
    **{("qwen3-235b-a22b", "megatron-tp4pp4", 1, p): TP4PP4_ONE_NODE | {"GRPO316/M8"} for p in ("shipped", "reviewed")},
    **{("qwen3-235b-a22b", "megatron-tp4pp4", 6, p): {"GRPO316/M8"} for p in ("shipped", "reviewed")},
}


@pytest.mark.parametrize("profile", ["shipped", "reviewed"])
@pytest.mark.parametrize("nodes", [1, 6])
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("model", ["qwen3-8b", "qwen2.5-72b", "qwen3-30b-a3b", "qwen3-235b-a22b"])
def test_documented_models_by_backend_and_nodes(base_specs, model, layout, nodes, profile):
    """Review: the model x backend table read as a free cross-product, and the reviewed default
    (ppo_mini_batch_size 24) was claimed valid for every model at 1 and 6 nodes; each cell lints as listed."""
    spec = spec_with(base_specs[LAYOUTS[layout]], {"job.model.preset": model, "cluster.nodes": nodes,
                                                   **(REVIEWED_DEFAULT if profile == "reviewed" else {})})
    if layout == "megatron-moe" and model not in ("qwen3-30b-a3b", "qwen3-235b-a22b"):
        spec = spec_with(spec, {"job.parallel.expert": 1, "job.parallel.expertTensor": None})
    assert errors(spec) == EXPECTED.get((model, layout, nodes, profile), set())


def test_shipped_values_have_no_batch_errors(base_specs):
    """Every shipped values file is clean for the batch rules."""
    for name, spec in base_specs.items():
        assert not errors(spec), name
