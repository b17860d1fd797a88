"""Which flag and key names GRPO201 reads as credentials, and which values are real ones: the names other
projects write (`--redis-password`, `secretAccessKey`, redis.conf `requirepass`) and the look-alikes
(`--max-tokens`, `--token-file`, `s3AccessKeyIDName`, `$(VAR)`)."""

from __future__ import annotations

import pytest
from grpo_stack.lint.rules._credentials import config_lines, flag_values, real_value, secret_name
from grpo_stack.lint.rules.literal_secret import NOT_A_CREDENTIAL, PLACEHOLDER


@pytest.mark.parametrize("name", ["--api-key", "--password", "--redis-password", "--hf-token", "--token",
                                  "secretAccessKey", "HF_TOKEN", "api_key", "requirepass", "--auth-token",
                                  "client_secret", "apikey"])
def test_credential_names(name):
    assert secret_name(name)


@pytest.mark.parametrize("name", ["--max-tokens", "--token-file", "--password-file", "--api-key-name",
                                  "s3AccessKeyIDName", "tokenizer", "--num-tokens", "--secret-name", "--key",
                                  "TOKEN_SECRET_NAME", "max_num_batched_tokens", "--password-stdin"])
def test_not_credential_names(name):
    assert not secret_name(name)


@pytest.mark.parametrize(("value", "real"), [
    ("sk-live-9f8e7d6c", True), ("LetMeInRay", True), ("$(VLLM_API_KEY)", False), ("${TOKEN}", False),
    ("$HF_TOKEN", False), ("<your-token>", False), ("changeme", False), ("", False), ("/etc/token", False),
    ("AWS_ACCESS_KEY_ID", False), ("true", False),
])
def test_real_values(value, real):
    assert real_value(value, PLACEHOLDER, NOT_A_CREDENTIAL) is real


def test_flags_take_the_next_word_or_their_own_value():
    words = ["app", "--api-key", "abc123", "--password=s3cret", "--verbose", "--token", "--other"]
    assert [(f, v) for _i, f, v in flag_values(words)] == [("--api-key", "abc123"), ("--password", "s3cret")]


def test_config_file_lines():
    text = "port 6379\nrequirepass 5241590000000000\n# password: old\napi_key = abc\nmax_tokens: 4096\n"
    assert [(n, k, v) for n, k, v in config_lines(text)] == [(2, "requirepass", "5241590000000000"),
                                                              (4, "api_key", "abc")]
