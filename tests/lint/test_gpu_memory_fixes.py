"""GRPO920's fixes are changes the model predicts fit: applied to the values, the error is gone."""

from __future__ import annotations

from grpo_stack.lint.engine import lint_values
from grpo_stack.paths import REPO_ROOT

BASE = str(REPO_ROOT / "values" / "qwen25-72b.yaml")
BAD = str(REPO_ROOT / "tests" / "lint" / "rules" / "fixtures" / "GRPO920" / "bad-72b-full-finetune-2-p5en.yaml")


def _memory(paths):
    return [f for f in lint_values(paths, release="grpo", namespace="grpo").findings if f.code == "GRPO920"]


def test_the_72b_full_fine_tune_on_2_p5en_names_the_phase_and_a_fix_that_fits(tmp_path):
    [finding] = _memory([BASE, BAD])
    assert finding.severity.value == "error"
    assert "rollout phase" in finding.message and "141.0 GiB" in finding.message
    assert "job.offload params+optimizer on" in finding.message
    fix = tmp_path / "fix.yaml"
    fix.write_text("global:\n  job:\n    offload: {params: true, optimizer: true}\n")
    assert not [f for f in _memory([BASE, BAD, str(fix)]) if f.severity.value == "error"]


def test_offloaded_states_above_the_node_memory_are_an_error():
    """A node whose allocatable RAM cannot take one copy of the offloaded states per GPU (the THUDM/slime#1851
    failure: CPU Adam on a node without the RAM for it)."""
    from dataclasses import replace

    from grpo_stack.catalog.models import MODELS
    from grpo_stack.lint.finding import Severity
    from grpo_stack.lint.rules import gpu_memory
    from grpo_stack.memory import Run
    from grpo_stack.memory.arch import from_shape
    from grpo_stack.memory.resolve import FIX_KEYS

    run = Run(from_shape(MODELS["qwen3-8b"]), "verl", "megatron", 144384 * 2**20, 1, 8, tp=2, seq_len=5120,
              param_offload=True, optimizer_offload=True, rollout="vllm", rollout_tp=4, gmu=0.6,
              max_model_len=5120, node_ram_bytes=64 * 2**30)
    hits = list(gpu_memory.findings_for_run(run, "small-ram", FIX_KEYS["verl"], lambda kind: {"key_path": kind}))
    host = [h for h in hits if "host RAM" in h.message]
    assert host and host[0].severity in (None, Severity.ERROR) and "small-ram" in host[0].message
    roomy = replace(run, node_ram_bytes=2048 * 2**30)
    assert not [h for h in gpu_memory.findings_for_run(roomy, "big", FIX_KEYS["verl"], lambda k: {"key_path": k})
                if "host RAM" in h.message]


FSDP_BASE = str(REPO_ROOT / "values" / "qwen3-8b.yaml")
FSDP_BAD = str(REPO_ROOT / "tests" / "lint" / "rules" / "fixtures" / "GRPO920" / "bad-fsdp-train-phase.yaml")


def _overlay(tmp_path, name: str, key_path: str, value) -> str:
    """A values file setting one dotted key (global.job.verl.overrides.<verl key> keeps its verl key whole)."""
    import yaml

    head, sep, verl_key = key_path.partition(".overrides.")
    parts = head.split(".") + (["overrides", verl_key] if sep else [])
    doc = value
    for part in reversed(parts):
        doc = {part: doc}
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def _fix_values(label: str) -> list[tuple[str, object]]:
    """`job.verl.batch.ppoMicroBatchSizePerGpu 4 + job.offload params+optimizer on` -> [(values key, value)]."""
    import yaml

    out = []
    for part in label.split(" + "):
        key, _, value = part.partition(" ")
        key = "global." + key
        out.append((key, {"params": True, "optimizer": True} if key.endswith(".offload") else yaml.safe_load(value)))
    return out


def test_an_fsdp_run_is_reported_and_fixed_with_keys_fsdp_has(tmp_path):
    """An FSDP run's GRPO920 named global.job.parallel.tensor (a Megatron size the values refuse under fsdp) and
    offered Megatron's recompute_granularity, which FSDP never reads. The reported key and every fix are set in
    the values here: each is accepted under the file's backend, and each fix removes the error."""
    errors = [f for f in _memory([FSDP_BASE, FSDP_BAD]) if f.severity.value == "error"]
    assert len(errors) == 1, [f.message for f in errors]
    [finding] = errors
    phase = finding.message.split(" phase")[0]
    result = lint_values([FSDP_BASE, FSDP_BAD], release="grpo", namespace="grpo")
    current = result.context.get(finding.key_path) if result.context else None
    reported = _overlay(tmp_path, "reported", finding.key_path, 1 if current is None else current)
    refused = lint_values([FSDP_BASE, FSDP_BAD, reported], release="grpo", namespace="grpo").input_errors
    assert not refused, f"{finding.key_path}: {[str(e) for e in refused]}"
    labels = finding.message.split("nearest fixes: ", 1)[1].split(", ")
    assert len(labels) >= 2, finding.message
    for n, label in enumerate(labels):
        files = [FSDP_BASE, FSDP_BAD] + [_overlay(tmp_path, f"fix{n}-{i}", key, value)
                                         for i, (key, value) in enumerate(_fix_values(label))]
        fixed = lint_values(files, release="grpo", namespace="grpo")
        assert not fixed.input_errors, f"{label}: {[str(e) for e in fixed.input_errors]}"
        still = [f.message for f in fixed.findings if f.code == "GRPO920" and f.severity.value == "error"
                 and f.message.startswith(phase)]
        assert not still, f"{label} was predicted to fit: {still}"
