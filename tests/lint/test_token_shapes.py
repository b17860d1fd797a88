"""Every token shape GRPO201 knows is found where it sits in a ConfigMap (each kind by a made-up token of its
shape): the literal each shape contains gates the pattern search, and a gate that missed a shape would pass it."""

from __future__ import annotations

import pytest
from grpo_stack.lint import release
from grpo_stack.lint.rules.literal_secret import TOKEN_PATTERNS

TOKENS = {
    "Hugging Face token": "hf_" + "Q7x2" * 8,
    "AWS access key id": "AKIA" + "Z3Q7" * 4,
    "GitHub token": "ghs_" + "k9P2" * 9,
    "OpenAI-style API key": "sk-" + "r8T1" * 6,
    "Slack token": "xoxb-" + "4417-" * 3,
    "private key": "-----BEGIN EC PRIVATE KEY-----",
}


def test_every_known_shape_has_a_case():
    assert set(TOKENS) == set(TOKEN_PATTERNS)


@pytest.mark.parametrize("kind", sorted(TOKENS))
def test_a_token_of_each_shape_in_a_configmap_is_an_error(tmp_path, kind):
    path = tmp_path / "cm.yaml"
    path.write_text(f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: app, namespace: apps}}\n"
                    f"data:\n  note: 'the value is {TOKENS[kind]} here'\n")
    result = release.lint_release([release.read_input(str(path))])
    assert [(f.code, f.line) for f in result.findings if kind in f.message] == [("GRPO201", 5)]
