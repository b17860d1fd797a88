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
