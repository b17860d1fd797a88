"""miles' own reward entry (`miles.rollout.rm_hub.batched_async_rm`) with the args miles parsed from the emitted
argv, through the dispatch the values select, on grpo-data's miles output loaded by miles:
- reward.kind service / external: miles' remote_rm posts {prompt, response, label} to the real reward service
  (`python -m reward_service` on loopback, configured with the env the release renders for it);
- reward.kind sandbox: the same, and the service's code route calls the test sandbox (tests/reward/sandbox_stub.py,
  which runs the program);
- reward.kind builtin: miles' own rule-based scorer (--rm-type deepscaler).
The score is taken as miles takes it: Sample.get_reward_value(args) (--reward-key) for training rows, and
sample.reward[eval_reward_key or reward_key] for the evaluation rows (--eval-prompt-data).

Where it stops: the response text is given (no SGLang generation); the only host rewritten is the release
Service's DNS name in --rm-url, to the loopback server (tests/miles/miles_worker.py). The one stub is torch.cuda's
device queries during argument validation (is_available, device_count, get_device_properties,
get_device_capability, current_device).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .cases import VARIANTS, rows

TRAINER_REQUESTS = (Path(__file__).resolve().parents[2] / "charts" / "grpo-stack" / "charts" / "reward-service"
                    / "files" / "trainer-requests.json")

pytestmark = pytest.mark.miles


def _scored(miles_runs, name):
    case, result, requests, sandbox = miles_runs[name]
    assert result["ok"], f"{name}: {result.get('stage')}: {result.get('error')}"
    return case, result["rewards"], requests, sandbox


@pytest.mark.parametrize("name", list(VARIANTS))
def test_right_answer_scores_one_and_wrong_zero_through_miles_dispatch(miles_runs, name):
    case, rewards, requests, _ = _scored(miles_runs, name)
    assert len(rewards) == len(requests) >= 4
    assert {r["dataset"] for r in requests} == {"train", "eval"}  # the evaluation rows go the same way
    for req, got in zip(requests, rewards, strict=True):
        assert got["value"] == req["expect"], (req["dataset"], req["problem"], req["response"], got["reply"])
        if case.kind != "builtin":  # the reward service's reply, as miles stored it on the sample
            assert got["reply"]["status"] == ("ok" if req["expect"] else "wrong"), got["reply"]


def test_code_samples_reach_the_sandbox(miles_runs):
    """reward.kind sandbox: every code answer is run by the sandbox the service calls (never by miles' scorer)."""
    case, rewards, requests, sandbox = _scored(miles_runs, "4b-sandbox")
    code = [r for r in requests if r["dataset"] == "train"]
    assert code and sandbox is not None
    assert sandbox.calls >= len(code) * 2  # two test cases per program
    assert [g["value"] for r, g in zip(requests, rewards, strict=True) if r["dataset"] == "train"] == \
        [r["expect"] for r in code]


def test_unknown_source_is_a_loud_failure_in_miles(miles_runs):
    """A row whose data_source the service does not route is refused with HTTP 400, which miles' remote_rm raises
    (aiohttp.ClientResponseError from raise_for_status): the rollout stops, never a silent 0."""
    _, result, _, _ = miles_runs["unknown-source"]
    assert not result["ok"] and result["stage"] == "reward"
    assert result["error"]["type"] == "ClientResponseError" and result["error"]["module"].startswith("aiohttp")
    assert "400" in result["error"]["message"]


def test_mutation_without_the_reward_type_fails_inside_miles(miles_runs):
    """The builder without --rm-type: miles' async_rm raises NotImplementedError at the first reward."""
    _, result, _, _ = miles_runs["mutation-no-rm-type"]
    assert not result["ok"] and result["stage"] == "reward", result
    assert result["error"]["type"] == "NotImplementedError"
    assert result["error"]["message"] == "Rule-based RM type is not specified."
    assert result["error"]["raised_in"].endswith("miles/rollout/rm_hub/__init__.py")


def test_mutation_with_the_bare_label_fails_inside_miles(miles_runs):
    """The label layout without data_source (the bare answer under --label-key): the service cannot route what
    miles sends, and miles' remote_rm raises the 400."""
    _, result, _, _ = miles_runs["mutation-bare-label"]
    assert not result["ok"] and result["stage"] == "reward", result
    assert result["error"]["type"] == "ClientResponseError" and "400" in result["error"]["message"]
    assert result["error"]["raised_in"].endswith("aiohttp/client_reqrep.py")


def test_helm_test_hook_sends_what_miles_sends(miles_runs):
    """What miles' own remote_rm posts for a grpo-data row has exactly the shape of the miles request the reward
    service's `helm test` hook posts (reward-service/files/trainer-requests.json): the same fields, the same label
    fields, the same types. A passing hook then means miles' first reward call is accepted."""
    case, result, _, bodies = miles_runs["capture-miles-request"]
    assert result["ok"], result
    (body,) = bodies
    hook = json.loads(TRAINER_REQUESTS.read_text())["miles"]
    assert set(body) == set(hook) and set(body["label"]) == set(hook["label"])
    assert {k: type(v).__name__ for k, v in body.items()} == {k: type(v).__name__ for k, v in hook.items()}
    assert {k: type(v).__name__ for k, v in body["label"].items()} == \
        {k: type(v).__name__ for k, v in hook["label"].items()}
    row = rows(case.on_storage(case.job["data"]["trainFiles"][0]))[0]
    assert body["label"] == {"data_source": row["metadata"]["data_source"], "ground_truth": row["label"]}
    assert body["prompt"].endswith("<|im_start|>assistant\n") and hook["prompt"].endswith("<|im_start|>assistant\n")
