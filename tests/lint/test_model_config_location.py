"""`grpo-lint --model-config CONFIG` points at the user's config.json, never at the overlay it generates.

The shape the config fills in is a values layer written to a temporary file; an error in it used to be reported
at that file (`/tmp/grpo-lint-model-…/config.json.values.yaml:9:9`), which the user never saw. Run through the
installed CLI, as a user would.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO_ROOT

QWEN3_8B = {"num_hidden_layers": 36, "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
            "intermediate_size": 12288, "vocab_size": 151936, "max_position_embeddings": 40960, "head_dim": 128}


def _lint(config: Path) -> subprocess.CompletedProcess:
    cli = Path(sys.executable).parent / "grpo-lint"
    return subprocess.run([str(cli), "values/qwen3-8b.yaml", "--model-config", str(config), "--no-cache"],
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)


def test_a_bad_shape_value_is_reported_at_its_config_key(tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({**QWEN3_8B, "hidden_size": -5}, indent=2))
    proc = _lint(config)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    line = next(n for n, text in enumerate(config.read_text().splitlines(), start=1) if '"hidden_size"' in text)
    assert f"{config}:{line}:" in proc.stdout and "(from hidden_size)" in proc.stdout, proc.stdout
    assert "grpo-lint-model-" not in proc.stdout + proc.stderr


def test_a_variant_key_spelling_is_located_too(tmp_path):
    """GPT-2 style names (n_layer, n_embd, n_head): the line of the key that was actually read."""
    config = tmp_path / "gpt2-config.json"
    body = {k: v for k, v in QWEN3_8B.items() if k not in ("num_attention_heads", "num_key_value_heads")}
    config.write_text(json.dumps({**body, "n_head": 0}, indent=1))
    proc = _lint(config)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    line = next(n for n, text in enumerate(config.read_text().splitlines(), start=1) if '"n_head"' in text)
    assert f"{config}:{line}:" in proc.stdout, proc.stdout
    assert "grpo-lint-model-" not in proc.stdout + proc.stderr
