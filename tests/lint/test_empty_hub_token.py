"""GRPO201 on an empty literal credential in a container's env: an error, except a Hugging Face Hub token, which the
Hub does not ask for public repositories: a warning naming that assumption. Where the check stops: whether the model
is gated is the Hub's to say; nothing is downloaded here."""

from __future__ import annotations

import textwrap

from tests.lint.fixtures import severities

POD = textwrap.dedent("""\
    apiVersion: v1
    kind: Pod
    metadata: {{name: wren-serve}}
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          args: [--model, /models/wren-8b]
          env:
            - {{name: {name}, value: ""}}
    """)


def test_an_empty_hub_token_is_a_warning_naming_the_gated_model_assumption(tmp_path):
    for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"):
        assert severities(tmp_path, POD.format(name=name), "GRPO201") == ["warning"]


def test_another_empty_credential_stays_an_error(tmp_path):
    assert severities(tmp_path, POD.format(name="WANDB_API_KEY"), "GRPO201") == ["error"]
