"""docs/own-model.md's YAML blocks lint clean: the walkthrough for a model outside the presets (Qwen3-14B, FSDP,
2 x p5.48xlarge) and a HyperPod ml.p5en.48xlarge cluster must be values a user can copy. Prevents documentation
whose examples fail the first command a reader runs."""

from __future__ import annotations

import re

import pytest
from grpo_stack.lint.engine import lint_values
from grpo_stack.paths import REPO_ROOT

DOC = REPO_ROOT / "docs" / "own-model.md"
BLOCK = re.compile(r"```yaml\n(.*?)```", re.S)


def blocks() -> dict[str, tuple[str | None, str]]:
    """file name -> (base file name or None, text) for every YAML block."""
    out = {}
    for text in BLOCK.findall(DOC.read_text()):
        name = re.match(r"# file: (\S+)", text)
        assert name, f"a YAML block in {DOC.name} does not start with '# file: <name>'"
        base = re.search(r"^# base: (\S+)", text, re.M)
        out[name.group(1)] = (base.group(1) if base else None, text)
    return out


def test_walkthrough_covers_the_promised_runs():
    found = blocks()
    texts = "\n".join(t for _, t in found.values())
    assert "gpuInstanceType: p5.48xlarge" in texts and "nodes: 2" in texts
    assert "gpuInstanceType: ml.p5en.48xlarge" in texts
    assert "backend: fsdp" in texts and "shape:" in texts


@pytest.mark.parametrize("name", sorted(blocks()))
def test_block_lints_clean(name, tmp_path):
    found = blocks()
    chain = []
    current: str | None = name
    while current is not None:
        base, text = found[current]
        path = tmp_path / current
        path.write_text(text)
        chain.insert(0, str(path))
        current = base
    result = lint_values(chain)
    assert not result.input_errors, [str(e) for e in result.input_errors]
    assert not result.findings, [f"{f.code} {f.key_path}: {f.message}" for f in result.findings]
