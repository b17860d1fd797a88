"""GRPO201 tells a credential from a blank to fill in: a Secret or env value that says "put yours here" (in any
of the spellings walkthroughs use) is a warning to fill it in out of band, a real-looking value an error."""

from __future__ import annotations

import textwrap

import pytest
from grpo_stack.lint.release import lint_manifests


def _severities(tmp_path, value: str) -> list[str]:
    path = tmp_path / "secret.yaml"
    path.write_text(textwrap.dedent(f"""\
        apiVersion: v1
        kind: Secret
        metadata: {{name: hub-token}}
        stringData:
          HF_TOKEN: "{value}"
        """))
    return [f.severity.value for f in lint_manifests(str(path)).findings if f.code == "GRPO201"]


@pytest.mark.parametrize("value", ["REPLACE_WITH_YOUR_HUGGINGFACE_TOKEN", "<your-hf-token>", "CHANGE_ME",
                                   "YOUR_HF_TOKEN", "paste-your-token-here", "your-api-key"])
def test_a_blank_to_fill_in_is_a_warning(tmp_path, value):
    assert _severities(tmp_path, value) == ["warning"]


@pytest.mark.parametrize("value", ["hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345", "Sup3rS3cret!", "youraccesskey1234"])
def test_a_value_that_could_be_the_credential_is_an_error(tmp_path, value):
    assert _severities(tmp_path, value) == ["error"]
