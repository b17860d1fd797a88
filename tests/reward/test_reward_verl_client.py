"""The verl custom reward function against the real server."""

from __future__ import annotations

import pytest
import verl_remote_reward
from reward_harness import free_port
from verl_remote_reward import RemoteRewardError, compute_score


def test_correct_and_wrong_answers(service, monkeypatch):
    monkeypatch.setenv("GRPO_REWARD_URL", service.url + "/score")
    assert compute_score("openai/gsm8k", "so the answer is \\boxed{42}", "42") == 1.0
    assert compute_score("openai/gsm8k", "so the answer is \\boxed{41}", 42, extra_info={"index": 3}) == 0.0
    assert compute_score("openai/gsm8k", "\\boxed{\\frac{1}{2}}", ["0.5"]) == 1.0


def test_service_fault_raises_instead_of_returning_zero(faulty_service, monkeypatch):
    """A service fault must raise in the trainer, not come back as reward 0.0 (verl #3407's silent zeros)."""
    monkeypatch.setenv("GRPO_REWARD_URL", faulty_service.url + "/score")
    original = verl_remote_reward.score_remote

    def with_fault(payload):
        payload["metadata"]["inject_fault"] = "raise"
        return original(payload)

    monkeypatch.setattr(verl_remote_reward, "score_remote", with_fault)
    with pytest.raises(RemoteRewardError, match="HTTP 500"):
        compute_score("openai/gsm8k", "\\boxed{1}", "1")


def test_unreachable_service_raises_after_retries(monkeypatch):
    monkeypatch.setenv("GRPO_REWARD_URL", f"http://127.0.0.1:{free_port()}/score")
    monkeypatch.setenv("GRPO_REWARD_RETRIES", "1")
    monkeypatch.setattr(verl_remote_reward.time, "sleep", lambda _seconds: None)
    with pytest.raises(RemoteRewardError, match="gave up after 2 attempts"):
        compute_score("openai/gsm8k", "\\boxed{1}", "1")


def test_missing_url_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("GRPO_REWARD_URL", raising=False)
    with pytest.raises(RemoteRewardError, match="GRPO_REWARD_URL is not set"):
        compute_score("openai/gsm8k", "\\boxed{1}", "1")
