"""GRPO201 on a Secret of the set: a value that says "fill me in" is a warning to act on (create the Secret out of
band), not a leaked credential; a real-looking value is an error."""

from __future__ import annotations

import textwrap

import pytest

from tests.lint.fixtures import severities


def _severities(tmp_path, value: str) -> list[str]:
    return severities(tmp_path, textwrap.dedent(f"""\
        apiVersion: v1
        kind: Secret
        metadata: {{name: hf}}
        type: Opaque
        stringData:
          hf_token: "{value}"
        """), "GRPO201")


@pytest.mark.parametrize("value", ["REPLACE_ME_WITH_YOUR_HUGGINGFACE_TOKEN", "change-me", "<your-token>",
                                   "REPLACE_WITH_YOUR_NGC_API_KEY", "xxxxxxxx", "REPLACE_WITH_GENERATED_KEY",
                                   "fill-in-the-router-key"])
def test_a_placeholder_is_a_warning(tmp_path, value):
    assert _severities(tmp_path, value) == ["warning"]


@pytest.mark.parametrize("value", ["hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345", "replacemewithsomething9"])
def test_a_real_looking_value_is_an_error(tmp_path, value):
    assert _severities(tmp_path, value) == ["error"]


@pytest.mark.parametrize("value", ["${HF_TOKEN}", "$HF_TOKEN"])
def test_a_shell_variable_in_string_data_is_filled_at_apply_time(tmp_path, value):
    """envsubst fills a plain-text Secret value from the shell when the file is applied: nothing is committed. The
    same text base64-encoded under `data` is beyond envsubst (bad-placeholder-secret.yaml keeps that a warning)."""
    assert _severities(tmp_path, value) == []
