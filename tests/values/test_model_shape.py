"""Any model: `global.job.model.shape` (or `grpo-lint --model-config config.json`) feeds the batch and parallelism
rules exactly as a preset does. Prevents the predecessor's limit of seven presets: a Qwen3-14B run could not be
written at all."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

from grpo_stack.catalog.hf_config import shape_from_config

from tests.job.cases import lint, spec_with

DATA = Path(__file__).parent / "data"
# Qwen3-8B as a shape, from the shared reference models.md main table (S1; S2 L570-584).
QWEN3_8B = {"layers": 36, "hidden": 4096, "intermediate": 12288, "heads": 32, "kvHeads": 8, "headDim": 128,
            "experts": 0, "vocab": 151936, "maxPositions": 40960}


def _codes(spec) -> set[str]:
    _, hits = lint(spec)
    return {code for code, hit in hits if hit.severity.value == "error"}


def test_shape_equal_to_a_preset_gives_the_same_findings(base_specs):
    """Same architecture, same verdicts: the rules read the shape where they read the preset."""
    bad = {"job.parallel": {"ulysses": 16}, "job.verl.batch.trainBatchSize": 100}
    with_preset = spec_with(base_specs["qwen3-8b"], bad)
    with_shape = copy.deepcopy(with_preset)
    with_shape["job"]["model"] = {"shape": QWEN3_8B, "path": "models/x"}
    assert _codes(with_preset)  # the case is bad at all
    assert _codes(with_shape) == _codes(with_preset)


def test_hf_config_fills_the_shape():
    """Qwen3-14B's config.json (values from the shared reference models.md) becomes the shape keys."""
    assert shape_from_config(str(DATA / "qwen3-14b-config.json")) == {
        "layers": 40, "hidden": 5120, "heads": 40, "vocab": 151936, "maxPositions": 40960, "kvHeads": 8,
        "experts": 0, "intermediate": 17408, "headDim": 128}


def test_model_config_option_lints_the_model_it_names(tmp_path, repo_root):
    """`grpo-lint --model-config` checks the parallelism against that model: 94 layers do not split over the
    4 pipeline stages of values/qwen25-72b.yaml (80 layers do)."""
    config = json.loads((DATA / "qwen3-14b-config.json").read_text()) | {"num_hidden_layers": 94}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    cmd = [sys.executable, "-m", "grpo_stack.cli.lint", "values/qwen25-72b.yaml", "--format", "json"]
    clean = subprocess.run(cmd, cwd=repo_root, capture_output=True, text=True, timeout=300, check=False)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    found = subprocess.run([*cmd, "--model-config", str(path)], cwd=repo_root, capture_output=True, text=True,
                           timeout=300, check=False)
    assert found.returncode == 1, found.stdout + found.stderr
    assert "GRPO316" in found.stdout


def test_model_config_that_is_not_a_config_is_an_input_error(tmp_path, repo_root):
    path = tmp_path / "config.json"
    path.write_text('{"hidden_size": 4096}')
    proc = subprocess.run([sys.executable, "-m", "grpo_stack.cli.lint", "values/qwen3-8b.yaml", "--model-config",
                           str(path)], cwd=repo_root, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 2
    assert "num_hidden_layers" in proc.stdout + proc.stderr
