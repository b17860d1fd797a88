"""`grpo-lint --model-config config.json` and grpo-render agree on a values file with neither model.preset nor
model.shape (issue: lint exited 0 on the shape it filled in, while grpo-render and helm install refused the file),
and the `shape:` block it prints, pasted into the file, is what makes both accept it. Run through the installed
CLIs, as a user would."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

from tests.conftest import REPO_ROOT

QWEN3_8B = {"num_hidden_layers": 36, "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
            "intermediate_size": 12288, "vocab_size": 151936, "max_position_embeddings": 40960, "head_dim": 128}


def _cli(name: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(Path(sys.executable).parent / name), *args], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=300)


def _merge(a: dict, b: dict) -> dict:
    out = dict(a)
    for k, v in b.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def test_lint_and_render_agree_and_the_printed_block_is_what_to_paste(tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps(QWEN3_8B))
    data = yaml.safe_load((REPO_ROOT / "values/qwen3-8b.yaml").read_text())
    del data["global"]["job"]["model"]["preset"]
    values = tmp_path / "my-model.yaml"
    values.write_text(yaml.safe_dump(data, sort_keys=False))

    lint = _cli("grpo-lint", str(values), "--model-config", str(config), "--no-cache")
    render = _cli("grpo-render", str(values))
    assert render.returncode == 2, render.stderr
    assert lint.returncode == 2, lint.stdout + lint.stderr
    line = next(n for n, text in enumerate(values.read_text().splitlines(), start=1) if text.strip() == "model:")
    assert f"{values}:{line}:" in lint.stdout and "global.job.model" in lint.stdout, lint.stdout

    block = lint.stderr[lint.stderr.index("\nglobal:\n") + 1:]
    block = "\n".join(t for t in block.splitlines() if not t.startswith("grpo-lint:"))
    pasted = yaml.safe_load(block)
    assert pasted["global"]["job"]["model"]["shape"]["layers"] == 36
    values.write_text(yaml.safe_dump(_merge(data, pasted), sort_keys=False))
    assert _cli("grpo-render", str(values)).returncode == 0
    lint = _cli("grpo-lint", str(values), "--no-cache")
    assert lint.returncode == 0, lint.stdout + lint.stderr
    lint = _cli("grpo-lint", str(values), "--model-config", str(config), "--no-cache")
    assert lint.returncode == 0, lint.stdout + lint.stderr
